"""Text handling before any rule runs: reading a tail, undoing paste damage, parsing lines."""
