# Exists only so mypy finds `evalspec.schemas` (the repository's schemas/ folder) beside the real
# `evalspec` package (engine/, see ../evalspec); mypy reads the real package from the first path entry.
