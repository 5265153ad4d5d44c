"""Maps the repository layout onto import names; everything else lives in pyproject.toml.

engine/ is imported as `evalspec`, server/ as `evalspec_lsp`, schemas/ as `evalspec.schemas`
(so the JSON Schemas ship inside the installed package).
"""

from setuptools import find_packages, setup

ROOTS = {"evalspec": "engine", "evalspec_lsp": "server"}

packages = ["evalspec.schemas"]
for name, folder in ROOTS.items():
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir={**ROOTS, "evalspec.schemas": "schemas"})
