"""The documentation holds together: every page of the navigation exists and has content, every
link between pages (README and docstrings included) lands on a page and a heading that exist,
and the privacy page has the sections a reader of the code needs; and ``.ci/run`` installs and
tests with README.md's two commands, as a new user does.

``mkdocs build --strict`` in ``.ci/run`` checks the docs' own links too; this test also covers
README.md and the docstrings, and runs with the test command a new user runs. Each check is
first shown to fail on a broken input (the ``*_flags_*`` tests), so that a green run means
something.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: A page with less prose than this is treated as emptied (the smallest page, the home page,
#: has about 2,000 characters).
MIN_CHARS = 1000

#: Sections a page must keep, by the slug of their heading: what a reader of the code is sent
#: to the page for.
REQUIRED_SECTIONS = {
    "privacy.md": [
        "privacy-units-the-whole-score-or-each-validation-record",
        "the-record-units-search-proposals-a-shortlist-one-private-choice",
        "the-one-shot-choice",
        "a-total-budget",
        "end-to-end-every-record-with-a-differentially-private-estimator",
        "the-privacy-report",
        "-local-joint-dp-in-tuning-qff-ldp",
        "-joint-dp-in-tuning-qff-jdp",
        "trust-boundary",
        "floating-point",
    ],
}

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
#: A docstring's reference to a section: docs/privacy.md, "Private selection"
_DOC_REF = re.compile(r"docs/([\w/-]+\.md),\s*\"([^\"]+)\"")


def slugify(text: str) -> str:
    """The anchor MkDocs gives a heading (Python-Markdown's ``toc`` slugify)."""
    text = re.sub(r"`([^`]*)`", r"\1", text)  # code spans count by their text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links by their text
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _plain(text: str) -> str:
    """Greek letters spelled out, for docstrings that write ``epsilon`` for ε."""
    for letter, name in (("ε", "epsilon"), ("α", "alpha"), ("β", "beta"), ("δ", "delta")):
        text = text.replace(letter, name)
    return text


def headings(markdown: str) -> list[str]:
    """The page's headings, outside fenced code blocks."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            out.append(match.group(2))
    return out


def anchors(page: Path) -> set[str]:
    return {slugify(h) for h in headings(page.read_text(encoding="utf-8"))}


def nav_pages(mkdocs_yml: Path) -> list[str]:
    """The pages the navigation lists (``name: page.md`` or ``- page.md``)."""
    return re.findall(r"([\w/.-]+\.md)\s*$", mkdocs_yml.read_text(encoding="utf-8"), re.M)


def page_problems(docs: Path, pages: list[str], required=None) -> list[str]:
    """Pages missing, emptied, or without a required section."""
    problems = []
    for name in pages:
        page = docs / name
        if not page.is_file():
            problems.append(f"{name}: listed in the navigation, missing")
            continue
        text = page.read_text(encoding="utf-8")
        prose = re.sub(r"\s+", " ", text).strip()
        if len(prose) < MIN_CHARS and ":::" not in text:
            problems.append(f"{name}: {len(prose)} characters, nearly empty")
        missing = set((required or {}).get(name, ())) - anchors(page)
        if missing:
            problems.append(f"{name}: sections missing: {sorted(missing)}")
    return problems


def link_problems(source: Path, text: str, base: Path) -> list[str]:
    """Links of ``text`` (a file at ``source``) to Markdown pages relative to ``base`` whose
    page or heading does not exist."""
    problems = []
    fenced_free = "\n".join(
        line for line, inside in _outside_fences(text.splitlines()) if not inside
    )
    for target in _LINK.findall(fenced_free):
        if "://" in target or target.startswith(("mailto:", "#")):
            continue
        path, _, anchor = target.partition("#")
        if not path.endswith(".md"):
            continue
        page = (base / path).resolve()
        if not page.is_file():
            problems.append(f"{source.relative_to(ROOT)}: link to a missing page {target}")
        elif anchor and anchor not in anchors(page):
            problems.append(f"{source.relative_to(ROOT)}: link to a missing heading {target}")
    return problems


def docstring_problems(source: Path, text: str, docs: Path) -> list[str]:
    """References of the form ``docs/page.md, "Section"`` whose page has no heading that
    starts with that name."""
    problems = []
    for name, section in _DOC_REF.findall(text):
        page = docs / name
        if not page.is_file():
            problems.append(f"{source.relative_to(ROOT)}: cites a missing page docs/{name}")
            continue
        if section.startswith("row ") or section == "last row":
            continue
        wanted = slugify(_plain(section))
        if not any(slugify(_plain(h)).startswith(wanted) for h in headings(page.read_text())):
            problems.append(
                f"{source.relative_to(ROOT)}: cites a missing section docs/{name}, {section!r}"
            )
    return problems


def _outside_fences(lines):
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            yield line, True
            continue
        yield line, fenced


# -- the checks, on the project ------------------------------------------------------------------


def test_every_page_of_the_navigation_exists_and_has_content():
    pages = nav_pages(ROOT / "mkdocs.yml")
    assert "privacy.md" in pages and len(pages) >= 15
    assert page_problems(DOCS, pages, REQUIRED_SECTIONS) == []


def test_every_page_is_in_the_navigation():
    listed = set(nav_pages(ROOT / "mkdocs.yml"))
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert on_disk - listed == set()


def test_every_link_to_a_page_lands_on_a_heading_that_exists():
    problems = link_problems(ROOT / "README.md", (ROOT / "README.md").read_text(), ROOT)
    for page in sorted(DOCS.rglob("*.md")):
        problems += link_problems(page, page.read_text(encoding="utf-8"), page.parent)
    assert problems == []


def test_every_section_a_docstring_cites_exists():
    problems = []
    for source in sorted((ROOT / "privtune").rglob("*.py")):
        problems += docstring_problems(source, source.read_text(encoding="utf-8"), DOCS)
    assert problems == []


# -- each check fails on a broken input ----------------------------------------------------------


@pytest.fixture
def broken_docs(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "privacy.md").write_text("")  # emptied, as by an accidental overwrite
    (docs / "short.md").write_text("# A title\n\nOne line.\n")
    (docs / "guide.md").write_text(
        "# Guide\n\n" + "Words. " * 200 + "\n\n## Trust boundary\n\n"
        "[units](privacy.md#privacy-units) [gone](missing.md) [here](#x) [ok](guide.md#guide)\n"
        "```python\n# not a heading\n[in code](nowhere.md)\n```\n"
    )
    return docs


def test_the_page_check_flags_an_emptied_page_and_a_missing_section(broken_docs):
    problems = page_problems(
        broken_docs,
        ["privacy.md", "short.md", "guide.md", "absent.md"],
        {"guide.md": ["trust-boundary", "floating-point"]},
    )
    assert any(p.startswith("privacy.md: 0 characters") for p in problems)
    assert any(p.startswith("short.md:") for p in problems)
    assert "absent.md: listed in the navigation, missing" in problems
    assert "guide.md: sections missing: ['floating-point']" in problems
    assert len(problems) == 4


def test_the_link_check_flags_a_missing_page_and_a_missing_heading(broken_docs, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", broken_docs.parent)
    guide = broken_docs / "guide.md"
    problems = link_problems(guide, guide.read_text(), broken_docs)
    assert problems == [
        "docs/guide.md: link to a missing heading privacy.md#privacy-units",
        "docs/guide.md: link to a missing page missing.md",
    ]


def test_the_docstring_check_flags_a_missing_section(broken_docs, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", broken_docs.parent)
    source = broken_docs.parent / "module.py"
    text = 'see docs/guide.md, "Trust boundary" and docs/guide.md, "Floating point"'
    problems = docstring_problems(source, text, broken_docs)
    assert problems == ["module.py: cites a missing section docs/guide.md, 'Floating point'"]


def test_slugs_are_mkdocs_anchors():
    assert slugify('(α, β)-joint DP in tuning: `"qff-jdp"`') == "-joint-dp-in-tuning-qff-jdp"
    assert slugify("Privacy units: the whole score, or each validation record") == (
        "privacy-units-the-whole-score-or-each-validation-record"
    )
    assert slugify("ε-LDP on scores: what it protects") == "-ldp-on-scores-what-it-protects"


def test_the_readmes_code_runs_as_written():
    # What a new user copies first: every Python block of README.md, in one namespace.
    import warnings

    import optuna

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 2
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resolution warning is the README's to show
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["private"].privacy_report_["n_val"] == 500
    assert namespace["sampler"].privacy_report(namespace["study"])["n_val"] == 500
    assert set(namespace["params"]) == {"n_neighbors"}


def readme_commands(readme: str, ci: str) -> tuple[str, str, list[str]]:
    """README.md's install and test commands, and the commands ``.ci/run`` runs its tests
    with (the arguments of ``run_tests``, up to the first file or line continuation)."""
    install = re.search(r"## Install and run an example\n+```bash\n(pip install [^&\n]*)", readme)
    test = re.search(r"## Run the tests\n+```bash\n([^\n]+)\n", readme)
    assert install and test, "README.md lost its install or test section"
    ran = [line.split(" tests/")[0].rstrip(" \\") for line in re.findall(r"run_tests (.*)", ci)]
    return install.group(1).strip(), test.group(1).strip(), ran


def ci_runs_what_the_readme_says(readme: str, ci: str) -> list[str]:
    """What ``.ci/run`` does not do of README.md's two commands (empty: it does both)."""
    install, test, ran = readme_commands(readme, ci)
    problems = []
    if f"python -m {install}" not in ci:
        problems.append(f"the install command {install!r}")
    if not ran or ran[0] != test:
        problems.append(f"the test command {test!r} (CI runs {ran!r})")
    # the floor's run: the same options, only its own interpreter and a subset of the files
    problems += [f"the floor's {r!r}" for r in ran[1:] if not r.endswith(test.split(" ", 1)[1])]
    return problems


def test_ci_installs_and_tests_with_the_readmes_commands():
    readme, ci = (ROOT / "README.md").read_text(), (ROOT / ".ci" / "run").read_text()
    assert ci_runs_what_the_readme_says(readme, ci) == []


def test_the_ci_check_flags_another_test_command():
    readme, ci = (ROOT / "README.md").read_text(), (ROOT / ".ci" / "run").read_text()
    _, test, _ = readme_commands(readme, ci)
    assert ci_runs_what_the_readme_says(readme, ci.replace(f"run_tests {test}", "run_tests pytest"))
    assert ci_runs_what_the_readme_says(readme.replace(test, f"{test} -x"), ci)
    floor = ci.replace("$floor -m pytest -n auto", "$floor -m pytest")
    assert ci_runs_what_the_readme_says(readme, floor)
    assert ci_runs_what_the_readme_says(
        readme, ci.replace('pip install -e ".[dev]"', "pip install -e .")
    )
