# Submitted the notebook without answering anything. Expected: 0/12.
