"""Which samples `eval qa --limit N` asks: a seeded spread over templates and hop counts.

Taking the first N would ask only the first templates (all "who" questions with many hops, for phantom).
Instead the samples are grouped into strata by (template, hops), each stratum is shuffled, and the
strata give one sample each in turn. The order does not depend on N, so a smaller limit always picks a
subset of a larger one and a rerun with a larger limit resumes.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from irbgen.schema import Sample

LIMIT_SEED = 0  # fixed: the same benchmark and limit always give the same questions


def stratum(sample: Sample) -> tuple[str, int]:
    """The (template, hops) a sample is drawn by; without a template, its question type."""
    attributes = sample.attributes
    template = attributes.template_id if attributes.template_id is not None else attributes.template
    name = str(template if template is not None else attributes.question_type or "")
    return name, sample.hops


def limited(samples: Sequence[Sample], limit: int | None, seed: int = LIMIT_SEED) -> list[Sample]:
    """LIMIT samples spread over the strata (all of them for None), kept in benchmark order."""
    if limit is None or limit >= len(samples):
        return list(samples)
    strata: dict[tuple[str, int], list[int]] = {}
    for index, sample in enumerate(samples):
        strata.setdefault(stratum(sample), []).append(index)
    rng = random.Random(seed)
    queues = []
    for key in sorted(strata):
        members = strata[key][:]
        rng.shuffle(members)
        queues.append(members)
    rng.shuffle(queues)
    order = [index for turn in itertools.zip_longest(*queues) for index in turn if index is not None]
    return [samples[index] for index in sorted(order[:limit])]
