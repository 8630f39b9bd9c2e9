"""Layout profile text for the tests that write their own profiles (torch_oracle_test.py,
profile_fuzz.py): a profile ends with a digest line that the tools check before anything else
(inspect/src/source/c10/TorchProfile.cpp), so a test that means to reach the checks behind it (a profile
that is sealed but does not fit) seals its edited text again, with dscope-profile's own
with_digest()."""

import importlib.machinery
import importlib.util
import pathlib

_TOOL = pathlib.Path(__file__).resolve().parents[2] / "profiles" / "probe" / "dscope-profile"
_loader = importlib.machinery.SourceFileLoader("dscope_profile_tool", str(_TOOL))
_spec = importlib.util.spec_from_loader(_loader.name, _loader)
_tool = importlib.util.module_from_spec(_spec)
_loader.exec_module(_tool)

DIGEST_PREFIX = "digest "


def unsealed(text):
    """The text without its digest line."""
    return "".join(l for l in text.splitlines(keepends=True) if not l.startswith(DIGEST_PREFIX))


def sealed(text):
    """text (with or without a digest line) ending with the digest of what precedes it."""
    return _tool.with_digest(unsealed(text))
