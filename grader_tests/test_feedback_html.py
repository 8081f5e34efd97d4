"""`make grade`'s feedback exporter (coursetools.grading.adapters.FeedbackHTMLExporter, c.Grading.fast_feedback_html)
writes the page nbconvert's HTML exporter writes, and the in-process alembic revision is the one `alembic heads`
gives: the two speed-ups of `make grade` that plain nbgrader does not have change nothing but the time. And the
cleaner of a student's HTML on those pages keeps its form and lets none of it act."""
import base64
import os
import sqlite3
import sys

import nbformat
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from coursetools.grading import adapters

PNG = base64.b64encode(bytes.fromhex('89504e470d0a1a0a0000000d4948445200000001000000010806000000'
                                     '1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082'))


def awkward_notebook():
    """Cells that exercise what the exporter marks: inputs, outputs, images with and without alt text, HTML
    outputs with their own tabindex, markup inside scripts and comments, magics, attachments."""
    html = ('<div class="jp-OutputArea-output extra" tabindex="3">own</div><img src="x.png">'
            '<script>var s = \'<div class="jp-Cell-inputWrapper"><img src=y>\';</script>'
            '<!-- <div class="jp-OutputArea-output"> --><IMG SRC="z.png" ALT="kept"/>'
            '<div data-x="a>b" class=\'jp-OutputArea-output\'>quoted</div>')
    cells = [
        new_markdown_cell('# Title\n\nSome *markdown* ![no alt](pic.png) and ![](empty.png) <img src="raw.png">'),
        new_markdown_cell('# Title\n\nSome *markdown* ![no alt](pic.png) and ![](empty.png) <img src="raw.png">'),
        new_markdown_cell('![attached](attachment:a.png)', attachments={'a.png': {'image/png': PNG.decode()}}),
        new_code_cell('def f(x):\n    return x < 3 and "<div>"\nprint(f(1))', outputs=[
            new_output('stream', name='stdout', text='True <div class="jp-OutputArea-output">\n')]),
        new_code_cell('%%bash\necho hi', outputs=[new_output('stream', name='stderr', text='warning\n')]),
        new_code_cell('display(HTML(...))', outputs=[new_output('display_data', data={'text/html': html})]),
        new_code_cell('plot()', outputs=[new_output('display_data', data={'image/png': PNG.decode(),
                                                                         'text/plain': '<Figure>'})]),
        new_code_cell('1/0', outputs=[new_output('error', ename='ZeroDivisionError', evalue='division by zero',
                                                 traceback=['\x1b[0;31mZeroDivisionError\x1b[0m: division'])]),
        new_code_cell('def f(x):\n    return x < 3 and "<div>"\nprint(f(1))'),
        new_code_cell(''),
    ]
    nb = new_notebook(cells=cells, metadata={'language_info': {'name': 'python', 'pygments_lexer': 'ipython3'}})
    nbformat.validate(nb)
    return nb


def test_fast_feedback_html_is_the_page_nbconvert_writes():
    nb = awkward_notebook()
    plain, _ = HTMLExporter().from_notebook_node(nb)
    fast_exporter = adapters.FeedbackHTMLExporter()
    fast, _ = fast_exporter.from_notebook_node(nb)
    again, _ = fast_exporter.from_notebook_node(nb)     # with everything highlighted and rendered already
    assert fast == again
    assert str(BeautifulSoup(fast, features='html.parser')) == plain
    assert plain.count('tabindex="0"') >= 10 and 'alt="No description has been provided for this image"' in plain


def test_mark_focusable_leaves_scripts_comments_and_other_tags_alone():
    page = ('<div class="a jp-Cell-inputWrapper b">x</div><div class="jp-Cell-input">y</div>'
            '<script><div class="jp-OutputArea-output"></script><!-- <img src=a> --><img src=b alt="">'
            '<style>img{}</style><IMG SRC=c>')
    marked, missing = adapters.mark_focusable(page)
    assert missing == 1
    assert marked == ('<div class="a jp-Cell-inputWrapper b" tabindex="0">x</div><div class="jp-Cell-input">y</div>'
                      '<script><div class="jp-OutputArea-output"></script><!-- <img src=a> --><img src=b alt="">'
                      '<style>img{}</style><IMG SRC=c alt="No description has been provided for this image">')


def test_alembic_head_is_what_alembic_says(tmp_path, monkeypatch):
    from nbgrader import api
    monkeypatch.setenv('PATH', os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ['PATH'])
    assert adapters.alembic_head() == api.get_alembic_version()      # nbgrader's own: `alembic heads`

    def versions(name, **speed_ups):
        with adapters.speed_ups(**speed_ups):
            api.Gradebook(f'sqlite:///{tmp_path / name}').close()
        with sqlite3.connect(tmp_path / name) as db:
            return db.execute('SELECT version_num FROM alembic_version').fetchall()
    assert versions('fast.db', in_process_alembic=True) == versions('plain.db') == [(adapters.alembic_head(),)]
    assert api.get_alembic_version.__module__ == 'nbgrader.api'          # undone when the run ends


ACTING_HTML = ['<script>x()</script>', '<img src=x onerror="x()">', '<a href=" jav&#x09;ascript:x()">a</a>',
               '<a href="JaVaScRiPt:x()">a</a>', '<a href="vbscript:x">a</a>', '<svg onload="x()"><circle/></svg>',
               '<iframe src="http://x"></iframe>', '<img src="data:text/html;base64,PHNjcmlwdD4=">',
               '<a href="data:text/html,hi">a</a>', '<form action="/api"><input name=x></form>',
               '<style>body{display:none}</style>', '<div style="background:url(javascript:x())">d</div>',
               '<math><mi xlink:href="javascript:x()">m</mi></math>', '<details open ontoggle="x()">d</details>',
               '<object data="x.swf"></object>', '<base href="http://x/">', '<meta http-equiv="refresh">']
KEPT_HTML = ['<h2 id="notes">Notes</h2>', '<p>a <em>b</em> <strong>c</strong> <code>d</code></p>',
             '<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>',
             '<ul><li>one</li></ul>', '<img src="data:image/png;base64,iVBORw0KGgo=" alt="pic">',
             '<a href="https://example.org/x">link</a>', '<a href="#notes">up</a>', '<span style="color: red;">r</span>']


def test_a_students_html_is_kept_in_form_and_never_acts():
    """The cleaner formgrader and the feedback pages use (coursetools.instructor.safe_html): nothing a student's
    markup holds can run (a script, an event handler, a script: or data: link, a frame, a form, a style sheet,
    SVG or MathML); what markdown makes stays as it was. The same, the second time a text is cleaned (small
    texts are kept once cleaned) and for a text too long to keep."""
    from coursetools.instructor.safe_html import KEPT_SIZE, clean_html
    acting = ('script', 'iframe', 'svg', 'form', 'input', 'style', 'math', 'object', 'base', 'meta')
    for html in [text for html in ACTING_HTML for text in (html, html, html + ' ' * KEPT_SIZE, html.encode())]:
        soup = BeautifulSoup(clean_html(html), features='html.parser')
        assert not soup.find_all(acting), html
        for tag in soup.find_all(True):
            assert not [name for name in tag.attrs if name.lower().startswith('on')], html
            for name in ('href', 'src'):        # a relative address, the web, mail, or a picture
                value = tag.get(name, '').strip().lower()
                scheme = value.split(':', 1)[0] if ':' in value.split('/', 1)[0] else ''
                assert scheme in ('', 'http', 'https', 'mailto') or value.startswith('data:image/'), html
            assert 'url(' not in tag.get('style', ''), html
    for html in KEPT_HTML * 2:
        assert clean_html(html) == html
