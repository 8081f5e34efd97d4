# Submitted the release untouched: every stub raises NotImplementedError. Expected: 0/15.
