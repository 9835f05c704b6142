# Stamped from the repository's VERSION file by scripts/stamp-version.mjs.
__version__ = "0.1.0"

USER_AGENT = f"atrium-sdk-python/{__version__}"
