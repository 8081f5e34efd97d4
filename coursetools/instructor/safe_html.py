"""HTML a student wrote (markdown, a written answer) or printed (`display(HTML(...))`), made safe to show on the
pages the instructor opens: formgrader's Manual Grading page, the feedback pages. Those pages are served from the
instructor's Jupyter server, so a script or an event handler there could act as the instructor (enter marks, run
code). nbconvert's own cleaner (`sanitize_html`) keeps only a dozen tags and shows a heading or a paragraph as
escaped text, and nbgrader's own templates do not sanitize markdown cells at all. So `nbgrader_config.py` turns
sanitizing on with this cleaner instead, and has every markdown cell's HTML cleaned too (`c.HTMLExporter.filters`):
what markdown makes (headings, paragraphs, tables, lists, images, links) stays; anything else is shown as text."""
import functools
import html
import re

import bleach
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, CSSSanitizer
from nbconvert import filters
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from coursetools.grading.progress import REORDERING

TAGS = frozenset({
    'a', 'abbr', 'b', 'blockquote', 'br', 'caption', 'cite', 'code', 'col', 'colgroup', 'dd', 'del', 'details',
    'div', 'dl', 'dt', 'em', 'figcaption', 'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'ins',
    'kbd', 'li', 'mark', 'ol', 'p', 'pre', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'summary', 'sup',
    'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'u', 'ul', 'var'})
COMMON = ('class', 'id', 'title', 'lang', 'dir', 'style')
ATTRIBUTES = {'a': ['href', 'name', 'target', 'rel'], 'img': ['src', 'alt', 'width', 'height'],
              'td': ['colspan', 'rowspan', 'align'], 'th': ['colspan', 'rowspan', 'align', 'scope'],
              'ol': ['start', 'type'], 'col': ['span'], 'colgroup': ['span'], 'details': ['open']}
PROTOCOLS = ('http', 'https', 'mailto', 'data')
_CSS = CSSSanitizer(allowed_css_properties=ALLOWED_CSS_PROPERTIES)


def _allowed(tag, name, value):
    """Whether attribute `name` of `tag` is kept; `data:` only as a picture's source (a pasted image)."""
    if name not in COMMON and name not in ATTRIBUTES.get(tag, ()):
        return False
    address = value.strip().lower()
    return name not in ('href', 'src') or not address.startswith('data:') or \
        (tag == 'img' and address.startswith('data:image/'))


def clean_html(html):
    """`html` with only the tags and attributes above, links and pictures only to the protocols above; other
    markup is escaped, so it shows as text instead of acting."""
    html = html.decode() if isinstance(html, bytes) else str(html)
    return _clean_kept(html) if len(html) <= KEPT_SIZE else _clean(html)


def _clean(html):
    return bleach.clean(html, tags=TAGS, attributes=_allowed, protocols=PROTOCOLS, css_sanitizer=_CSS)


#: Every student's feedback page shows the course's markdown cells, the same text each time, and cleaning them
#: was a third of a page's conversion: the last 256 texts of at most 16 KiB are kept, cleaned.
KEPT_SIZE = 16 * 1024
_clean_kept = functools.lru_cache(maxsize=256)(_clean)


def strip_files_prefix(html):
    """nbconvert's filter of that name, then `clean_html`: nbconvert's and nbgrader's templates pass the HTML of
    every markdown cell (and of formgrader's comments) through it, and nbgrader's through nothing else."""
    return clean_html(filters.strip_files_prefix(html))


class PlainOutputSizes(Preprocessor):
    """Keeps, of each output's metadata, only an image's width and height, and only as whole numbers. nbconvert
    writes them into the image's tag unquoted, on formgrader's pages and the feedback pages alike, and the cleaner
    above reads an output's data, never its metadata: a width of `1 onerror=...` acted there. Runs right after the
    notebook is executed (`c.Autograde.autograde_preprocessors`), so the autograded notebook keeps no other."""
    enabled = Bool(True)

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get('outputs', []):
            if 'metadata' in output:
                found = output['metadata'] if isinstance(output['metadata'], dict) else {}
                output['metadata'] = {mime: {key: int(size) for key, size in sizes.items()
                                             if key in ('width', 'height') and str(size).isdecimal()}
                                      for mime, sizes in found.items() if isinstance(sizes, dict)}
        return cell, resources


_REORDERING = re.compile(f'[{REORDERING}]')


def escaped(text) -> str:
    """Text for an HTML page the instructor opens: markup shown as text, and the marks that reorder text around
    them (a right-to-left override in a student's message) shown as their codes, as the terminal shows them."""
    return html.escape(_REORDERING.sub(lambda mark: mark.group().encode('unicode_escape').decode(), str(text)),
                       quote=True)
