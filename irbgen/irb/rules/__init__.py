"""The offline backends of the IRB stages, one module per stage: keypoints, grounding, graph, questions."""
