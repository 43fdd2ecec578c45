"""`ray` (the CLI) with every node address kept at 127.0.0.1: a two-node Ray check on one machine.

    RAY_AUTH_MODE=token python bench/ray_loopback.py start --head --node-ip-address 127.0.0.1 \
        --port 6390 --num-cpus 1
    RAY_AUTH_MODE=token python bench/ray_loopback.py start --address 127.0.0.1:6390 \
        --node-ip-address 127.0.0.1 --num-cpus 1
    ray stop

Ray maps 127.0.0.1 to the machine's network address when it starts a node others may join; this
keeps the given address instead.
"""

import sys

import ray._private.services as services
from ray.scripts.scripts import main

services.resolve_ip_for_localhost = lambda host: host
services.get_node_ip_address = lambda address=None: "127.0.0.1"
sys.exit(main())
