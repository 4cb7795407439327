"""Placeholder package for the `mcp-stdio-guard` pre-commit hook (`language: python`).

pre-commit installs a python hook with `pip install .` at the root of this repository at the
`rev` a user pins. This package has no code: it only pins the PyPI package built from
dist/pypi (maturin, `bindings = "bin"`), a prebuilt static binary per platform, so the hook
needs neither Rust nor a compiler. scripts/bump-version keeps the pin equal to Cargo.toml.
"""

from setuptools import setup

MCP_STDIO_GUARD_VERSION = "0.1.0"

setup(
    name="pre_commit_placeholder_package",
    version="0.0.0",
    install_requires=[f"mcp-stdio-guard=={MCP_STDIO_GUARD_VERSION}"],
    # Nothing to package: keeps setuptools from looking for packages in src/, tests/, dist/...
    packages=[],
    py_modules=[],
)
