"""The result record: the folders a run leaves, their formats, and the one upgrade step for old ones."""
