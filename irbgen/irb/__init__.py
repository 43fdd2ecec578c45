"""IRB-style benchmarks from Wikipedia sentences that cite web pages: keypoints, grounding, facts."""
