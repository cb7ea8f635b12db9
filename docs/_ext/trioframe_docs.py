"""The Sphinx extension of trioframe's documentation site (loaded by ``docs/conf.py``).

Three jobs:

- **The reference is complete.** Every public name (``trioframe.__all__``,
  ``trioframe.testing.__all__``, ``trioframe.middleware.__all__``) must have a docstring and
  must be described somewhere under ``docs/reference/``; a name that lacks either is a warning,
  so a strict build (``-W``) fails and lists them all. Names that are not classes or functions
  (``Path = Annotated[T, PATH]``, ``Next = Callable[...]``) take the docstring written under
  (or the ``#:`` comment above) their assignment in the module that defines them.
- **Private paths read as public names.** A signature's annotation names the class where it
  is defined (``trioframe._response.Response``); such a reference resolves to the public name
  of the same object (``trioframe.Response``).
- **Links that leave docs/** keep working on the repository's own file view and build
  strictly: the repository files listed in ``trioframe_repository_pages`` (``CHANGELOG.md``,
  ``bench/README.md``) are pages of the site that include them, and a link to one of them goes
  to that page (anchors included); other files outside docs/ (``../examples/auth.py``) are
  shipped with the site as downloads, which Sphinx checks exist.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import logging as std_logging
import os
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.pycode import ModuleAnalyzer
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The modules whose ``__all__`` the reference must cover.
PUBLIC_MODULES = ("trioframe", "trioframe.testing", "trioframe.middleware")


def public_names() -> dict[str, Any]:
    """Every public name, as ``"module.Name"``, with the object it is bound to."""
    names = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            names[f"{module_name}.{name}"] = getattr(module, name)
    return names


def imported_from(module_name: str) -> dict[str, tuple[str, str]]:
    """``{public name: (defining module, name there)}`` from the ``from X import Y as Z``
    lines of a public module's source."""
    module = importlib.import_module(module_name)
    package = module.__name__ if hasattr(module, "__path__") else module.__package__ or ""
    tree = ast.parse(inspect.getsource(module))
    found = {}
    for statement in ast.walk(tree):
        if isinstance(statement, ast.ImportFrom) and statement.module is not None:
            source = statement.module
            if statement.level:
                base = package.rsplit(".", statement.level - 1)[0]
                source = f"{base}.{source}"
            for alias in statement.names:
                found[alias.asname or alias.name] = (source, alias.name)
    return found


def attribute_docstring(module_name: str, name: str) -> str:
    """The docstring under (or ``#:`` comment above) ``name = ...`` in ``module_name``,
    following re-exports until an assignment is found; ``""`` when there is none."""
    for _ in range(5):
        try:
            docs = ModuleAnalyzer.for_module(module_name).find_attr_docs()
        except Exception:
            return ""
        if ("", name) in docs:
            return "\n".join(docs[("", name)]).strip()
        origin = imported_from(module_name).get(name)
        if origin is None:
            return ""
        module_name, name = origin
    return ""


def docstring(full_name: str, value: Any) -> str:
    """What the reference shows as the documentation of a public name."""
    if inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value):
        own = value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
        return inspect.cleandoc(own or "")
    module_name, _, name = full_name.rpartition(".")
    return attribute_docstring(module_name, name)


def fill_alias_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """``autodoc-process-docstring``: a public alias shows its definition's docstring."""
    if what not in ("data", "attribute") or not name.startswith("trioframe."):
        return
    if inspect.isclass(obj) or inspect.isroutine(obj):
        return
    module_name, _, attr = name.rpartition(".")
    text = attribute_docstring(module_name, attr)
    if text:
        lines[:] = [*text.splitlines(), ""]


def public_name_of(app: Sphinx, target: str) -> str | None:
    """The public name bound to the object a private dotted path names, if any."""
    module_name, _, attr = target.rpartition(".")
    if not module_name.startswith("trioframe"):
        return None
    try:
        value = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        return None
    names = [full_name for full_name, public in public_names().items() if public is value]
    described = app.env.domains.python_domain.objects
    for full_name in names:
        if full_name in described:
            return full_name
    return names[0] if names else None


def resolve_private(
    app: Sphinx, env: BuildEnvironment, node: addnodes.pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    """``missing-reference``: ``trioframe._x.Y`` resolves as the public ``trioframe.Y``."""
    if node.get("refdomain") != "py" or not node["reftarget"].startswith("trioframe."):
        return None
    public = public_name_of(app, node["reftarget"])
    if public is None or public == node["reftarget"]:
        return None
    domain = env.domains.python_domain
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], public, node, contnode
    )


def check_reference(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-check-consistency``: each public name has a docstring and a reference entry."""
    described = {
        name
        for name, entry in env.domains.python_domain.objects.items()
        if entry.docname.startswith("reference/")
    }
    names = public_names()
    for full_name, value in names.items():
        if not docstring(full_name, value):
            logger.warning("%s has no docstring", full_name, type="trioframe", subtype="api")
        # A re-export (trioframe.CorsMiddleware is trioframe.middleware.CorsMiddleware) is
        # described once, under any of its public names.
        same = {other for other, bound in names.items() if bound is value}
        if not same & described:
            logger.warning(
                "%s is not described in docs/reference/", full_name, type="trioframe", subtype="api"
            )


class RepositoryLinks(SphinxTransform):
    """Links to repository files that are pages of the site go to those pages."""

    default_priority = 5  # before myst's resolution of the references

    def apply(self, **kwargs: Any) -> None:
        pages: dict[str, str] = self.config.trioframe_repository_pages
        root = os.path.dirname(os.path.abspath(self.env.srcdir))
        here = os.path.dirname(self.env.doc2path(self.env.docname))
        for node in list(self.document.findall(addnodes.pending_xref)):
            self.retarget(node, pages, root, here)
        for node in list(self.document.findall(addnodes.download_reference)):
            self.retarget(node, pages, root, here)

    def retarget(self, node: nodes.Element, pages: dict[str, str], root: str, here: str) -> None:
        if node.get("reftype") != "myst":
            return
        path, _, anchor = node["reftarget"].partition("#")
        anchor = anchor or node.get("reftargetid") or ""
        if node.get("refdomain") == "doc":
            # A Markdown file outside docs/: myst names it by its absolute path, no suffix.
            if path in self.env.found_docs or not os.path.isabs(path):
                return
            path += ".md"
        relative = os.path.relpath(os.path.normpath(os.path.join(here, path)), root)
        page = pages.get(relative.replace(os.sep, "/"))
        if page is None:
            return
        xref = addnodes.pending_xref(
            "",
            *node.children,
            refdomain="doc",
            reftarget=page,
            reftargetid=anchor or None,
            refdoc=self.env.docname,
            reftype="myst",
            refexplicit=node.get("refexplicit", True),
        )
        node.replace_self(xref)


class OptionalGlobs(std_logging.Filter):
    """Drops "toctree glob pattern ... didn't match any documents" for the patterns of
    ``trioframe_optional_globs`` only: sections whose pages are still being written. Sphinx
    gives this warning no type, so ``suppress_warnings`` cannot name it."""

    def __init__(self, app: Sphinx) -> None:
        super().__init__()
        self.app = app

    def filter(self, record: std_logging.LogRecord) -> bool:
        if "didn't match any documents" not in str(record.msg) or not record.args:
            return True
        args = record.args if isinstance(record.args, tuple) else (record.args,)
        return args[0] not in self.app.config.trioframe_optional_globs


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("trioframe_repository_pages", {}, "env")
    app.add_config_value("trioframe_optional_globs", [], "env")
    std_logging.getLogger("sphinx.sphinx.directives.other").addFilter(OptionalGlobs(app))
    app.connect("autodoc-process-docstring", fill_alias_docstring)
    app.connect("missing-reference", resolve_private)
    app.connect("env-check-consistency", check_reference)
    app.add_transform(RepositoryLinks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
