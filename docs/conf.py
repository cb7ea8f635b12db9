"""Sphinx configuration of trioframe's documentation site: ``nox -s docs`` builds it into
docs/_build/html with warnings as errors; docs/README.md says how and why."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]

import trioframe  # noqa: E402  (after the path above, so the checkout's package is documented)

project = "trioframe"
author = "trioframe developers"
copyright = "trioframe developers"
release = version = trioframe.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx_copybutton",
    "trioframe_docs",
]

root_doc = "index"
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]

# The tutorial, how-to and coming-from sections are globbed from the root toctree, so that
# their pages slot in as they are written; a section with only its index is not an error.
trioframe_optional_globs = ["tutorial/*", "howto/*", "coming-from/*"]

# Markdown (MyST): every heading gets the GitHub-style anchor the pages already link to.
myst_heading_anchors = 6
myst_enable_extensions = ["deflist"]

# Repository files shown as pages of the site (they include the file); links from docs/ to
# the file go to the page. Other files outside docs/ are shipped as downloads.
trioframe_repository_pages = {
    "CHANGELOG.md": "changelog",
    "bench/README.md": "benchmarks",
}

# Strict: every cross-reference must resolve (``-n``). A private path that names a public
# object resolves to its public name (docs/_ext/trioframe_docs.py); what cannot resolve is
# ignored by name only: types of other projects (their inventories would have to be fetched
# over the network, intersphinx) and trioframe's private types that public signatures
# mention (``trioframe._app.PreparedEndpoint``, type variables), which have no page.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(?!trioframe\b).*"),
    (r"py:.*", r"trioframe(\.\w+)*\._\w+(\.\w+)*"),
]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}
autoclass_content = "both"

html_theme = "furo"
html_title = f"trioframe {release}"
html_theme_options = {"navigation_with_keys": True}
html_show_sourcelink = False
html_copy_source = False

copybutton_prompt_text = r"\$ |>>> |\.\.\. "
copybutton_prompt_is_regexp = True
