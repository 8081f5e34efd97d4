"""Importing an LMS's "download all submissions" zip (Moodle, Canvas, Blackboard) into submitted/, then grading it.

The zips are built here the way each LMS names its files, from the demo class's notebooks.
"""
import hashlib
import shutil
import subprocess
import sys
import zipfile

import nbformat
import pytest

from conftest import ROOT, copy_course, run_grade
from coursetools.instructor import lms
from coursetools.instructor import marks
from test_demo_class import EXPECTED, TASKS

A = 'noughts_and_crosses'
NB = f'{A}.ipynb'
WHEN = (2026, 11, 20, 17, 0, 0)
WHEN_TEXT = '2026-11-20 17:00:00.000000 UTC'


def notebook(student):
    """A demo student's notebook, as a student would upload it."""
    from coursetools.instructor import democlass
    release = nbformat.read(ROOT / 'release' / A / NB, as_version=4)
    return nbformat.writes(democlass.fill(release, *democlass.read_answers(ROOT / 'demo_class' / A / f'{student}.py'))
                           ).encode()


def make_zip(path, entries):
    """entries: (name, bytes, date_time) or (name, bytes); a name ending in / is a folder."""
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as zf:
        for name, data, *when in entries:
            info = zipfile.ZipInfo(name, date_time=when[0] if when else WHEN)
            info.external_attr = (0o40755 if name.endswith('/') else 0o100644) << 16
            zf.writestr(info, data)
    return path


@pytest.fixture
def course(tmp_path):
    """An empty course: the release (for its supporting files), no submissions."""
    folder = tmp_path / 'course'
    shutil.copytree(ROOT / 'release', folder / 'release')
    return folder


def submission(course, student):
    return course / 'submitted' / student / A


def test_moodle_folders(course, tmp_path):
    zip_path = make_zip(tmp_path / 'moodle.zip', [
        ('Ada Lovelace_1234567_assignsubmission_file_/', b''),
        ('Ada Lovelace_1234567_assignsubmission_file_/noughts_and_crosses.ipynb', notebook('ada')),
        ('Ben Bitdiddle_1234568_assignsubmission_file_/noughts_and_crosses (1).ipynb', notebook('ben'),
         (2026, 11, 19, 9, 30, 6)),
        ('Zoë O\'Neil_1234569_assignsubmission_file_/noughts_and_crosses.ipynb', notebook('cat')),
        ('Zoë O\'Neil_1234569_assignsubmission_onlinetext_onlinetext.html', b'<p>see my notebook</p>'),
        ('__MACOSX/._noughts_and_crosses.ipynb', b'junk'),
    ])
    summary = lms.import_zip(zip_path, A, course)
    assert summary.styles == {'moodle': 3}
    assert sorted(s for s, *_ in summary.imported) == ['ada-lovelace', 'ben-bitdiddle', 'zoe-o-neil']
    assert (submission(course, 'ada-lovelace') / NB).read_bytes() == notebook('ada')
    # A browser-renamed notebook keeps its name (a later step repairs it).
    assert (submission(course, 'ben-bitdiddle') / 'noughts_and_crosses (1).ipynb').read_bytes() == notebook('ben')
    assert not (submission(course, 'ben-bitdiddle') / NB).exists()
    assert (submission(course, 'ada-lovelace') / 'timestamp.txt').read_text().strip() == WHEN_TEXT
    assert (submission(course, 'ben-bitdiddle') / 'timestamp.txt').read_text().strip() == \
        '2026-11-19 09:30:06.000000 UTC'  # zip times have 2 s steps
    # The release's supporting files come along, as when a student submits the whole folder.
    assert (submission(course, 'ada-lovelace') / 'minimax_widget' / '__init__.py').read_bytes() == \
        (ROOT / 'release' / A / 'minimax_widget' / '__init__.py').read_bytes()
    assert [what for what, reason in summary.skipped] == [
        "Zoë O'Neil_1234569_assignsubmission_onlinetext_onlinetext.html"]
    assert not summary.refused and not summary.unmatched
    assert sorted(p.name for p in (course / 'submitted').iterdir()) == ['ada-lovelace', 'ben-bitdiddle', 'zoe-o-neil']
    assert not list(course.glob('.lms-import-*'))


def test_moodle_flat_and_blind_marking(course, tmp_path):
    zip_path = make_zip(tmp_path / 'moodle-flat.zip', [
        ('Ada Lovelace_1234567_assignsubmission_file_noughts_and_crosses.ipynb', notebook('ada')),
        ('Participant_7654321_assignsubmission_file_noughts_and_crosses.ipynb', notebook('dan')),
    ])
    summary = lms.import_zip(zip_path, A, course)
    assert sorted(s for s, *_ in summary.imported) == ['ada-lovelace', 'participant-7654321']
    assert (submission(course, 'participant-7654321') / NB).read_bytes() == notebook('dan')


def test_canvas(course, tmp_path):
    zip_path = make_zip(tmp_path / 'submissions.zip', [
        ('lovelaceada_12345_6789012_noughts_and_crosses.ipynb', notebook('ada')),
        ('bitdiddleben_LATE_12346_6789013_noughts_and_crosses-1.ipynb', notebook('ben'), (2026, 11, 21, 8, 0, 0)),
        ('hackeralyssa_12347_6789014_noughts_and_crosses.ipynb', notebook('eve')),
        ('hackeralyssa_12347_6789015_helpers.py', b'X = 1\n'),
        ('notes.txt', b'not from the LMS'),
    ])
    summary = lms.import_zip(zip_path, A, course)
    assert summary.styles == {'canvas': 4}
    assert sorted(s for s, *_ in summary.imported) == ['bitdiddleben', 'hackeralyssa', 'lovelaceada']
    assert summary.late == ['bitdiddleben']
    assert (submission(course, 'bitdiddleben') / 'noughts_and_crosses-1.ipynb').read_bytes() == notebook('ben')
    assert (submission(course, 'bitdiddleben') / 'timestamp.txt').read_text().strip() == \
        '2026-11-21 08:00:00.000000 UTC'
    assert (submission(course, 'hackeralyssa') / 'helpers.py').read_text() == 'X = 1\n'
    assert summary.skipped == [('notes.txt', 'file name is in no known LMS style (Moodle, Canvas, Blackboard)')]
    assert 'marked late by the LMS: bitdiddleben' in summary.format()


def test_a_notebook_too_deep_or_broken_to_read_is_imported_as_it_is_with_a_warning(course, tmp_path):
    """The import reads each notebook to warn about it; one nested 100,000 levels deep (past what Python's
    reader can follow) is warned about like a broken one, and the others are imported as usual."""
    deep = b'{"cells": [], "metadata": {"x": ' + b'[' * 100_000 + b']' * 100_000 + b'}}'
    zip_path = make_zip(tmp_path / 'submissions.zip', [
        ('lovelaceada_12345_6789012_noughts_and_crosses.ipynb', notebook('ada')),
        ('bitdiddleben_12346_6789013_noughts_and_crosses.ipynb', deep),
        ('hackeralyssa_12347_6789014_noughts_and_crosses.ipynb', b'{"cells": ['),
    ])
    summary = lms.import_zip(zip_path, A, course)
    assert sorted(s for s, *_ in summary.imported) == ['bitdiddleben', 'hackeralyssa', 'lovelaceada']
    assert summary.warnings == [f'{student}: noughts_and_crosses.ipynb cannot be read as notebook JSON (imported as '
                                'it is)' for student in ('bitdiddleben', 'hackeralyssa')]
    assert (submission(course, 'bitdiddleben') / NB).read_bytes() == deep


def receipt(full, user, attempt, files):
    listed = ''.join(f'\tOriginal filename: {original}\n\tFilename: {stored}\n' for original, stored in files)
    return (f'Name: {full} ({user})\nAssignment: Noughts_and_crosses\nDate Submitted: Friday, 20 November 2026 '
            f'17:00:00 o\'clock GMT\nCurrent Grade: Needs Grading\n\nSubmission Field:\nThere is no student '
            f'submission text data for this assignment.\n\nComments:\nThere are no student comments for this '
            f'assignment.\n\nFiles:\n{listed}').encode()


def test_blackboard(course, tmp_path):
    # The assignment's own name has underscores: the receipt tells where the user name starts.
    early, late = '2026-11-19-10-00-00', '2026-11-20-17-00-00'
    name = 'Noughts_and_crosses_{user}_attempt_{when}'
    entries = [
        (name.format(user='alovelace', when=late) + '_noughts_and_crosses.ipynb', notebook('ada')),
        (name.format(user='alovelace', when=late) + '.txt', receipt('Ada Lovelace', 'alovelace', late, [
            (NB, name.format(user='alovelace', when=late) + '_noughts_and_crosses.ipynb')])),
        # Two attempts by s1234567: the newest one counts.
        (name.format(user='s1234567', when=early) + '_noughts_and_crosses.ipynb', notebook('max')),
        (name.format(user='s1234567', when=late) + '_noughts_and_crosses.ipynb', notebook('fay')),
        # A single file stored without its original name: the receipt has it.
        (name.format(user='bbit', when=early) + '.ipynb', notebook('ben')),
        (name.format(user='bbit', when=early) + '.txt', receipt('Ben Bitdiddle', 'bbit', early, [
            ('noughts_and_crosses (2).ipynb', name.format(user='bbit', when=early) + '.ipynb')])),
    ]
    summary = lms.import_zip(make_zip(tmp_path / 'gradebook_download.zip', entries), A, course,
                             timezone='America/New_York')
    assert sorted(s for s, *_ in summary.imported) == ['alovelace', 'bbit', 's1234567']
    assert (submission(course, 's1234567') / NB).read_bytes() == notebook('fay')
    assert summary.skipped == [(f's1234567 attempt {early}', 'an older attempt; the newest is imported')]
    assert (submission(course, 'bbit') / 'noughts_and_crosses (2).ipynb').read_bytes() == notebook('ben')
    # The time in the name is the LMS server's (here New York, EST = UTC-5), written in UTC.
    assert (submission(course, 'alovelace') / 'timestamp.txt').read_text().strip() == \
        '2026-11-20 22:00:00.000000 UTC'
    assert not any(p.suffix == '.txt' and p.name != 'timestamp.txt' and not (ROOT / 'release' / A / p.name).exists()
                   for p in (course / 'submitted').rglob('*'))         # receipts left out; the release's own files kept


def test_mapping_file(course, tmp_path):
    mapping = tmp_path / 'map.csv'
    mapping.write_text('lms_name,student_id\nAda Lovelace,ada\n1234568,ben\nNobody Here,nobody\n')
    zip_path = make_zip(tmp_path / 'moodle.zip', [
        ('Ada Lovelace_1234567_assignsubmission_file_/noughts_and_crosses.ipynb', notebook('ada')),
        ('Ben Bitdiddle_1234568_assignsubmission_file_/noughts_and_crosses.ipynb', notebook('ben')),
        ('Eve Stranger_1234570_assignsubmission_file_/noughts_and_crosses.ipynb', notebook('eve')),
    ])
    summary = lms.import_zip(zip_path, A, course, mapping=mapping)
    assert sorted(s for s, *_ in summary.imported) == ['ada', 'ben']
    assert summary.unmatched == ['Eve Stranger']
    assert summary.not_submitted == ['nobody']
    assert sorted(p.name for p in (course / 'submitted').iterdir()) == ['ada', 'ben']
    text = summary.format()
    assert 'unmatched names (not in the mapping file, not imported): Eve Stranger' in text
    assert 'no submission in the zip: nobody' in text

    bad = tmp_path / 'bad.csv'
    bad.write_text('lms_name,student_id\nAda Lovelace,../ada\n')
    with pytest.raises(lms.LmsImportError, match='not a usable student id'):
        lms.import_zip(zip_path, A, course, mapping=bad)
    bad.write_text('name,id\nAda Lovelace,ada\n')
    with pytest.raises(lms.LmsImportError, match='lms_name,student_id'):
        lms.import_zip(zip_path, A, course, mapping=bad)


def test_two_lms_users_with_one_id_are_not_merged(course, tmp_path):
    zip_path = make_zip(tmp_path / 'moodle.zip', [
        ('Ada Lovelace_1234567_assignsubmission_file_/noughts_and_crosses.ipynb', notebook('ada')),
        ('Ada Lovelace_7777777_assignsubmission_file_/noughts_and_crosses.ipynb', notebook('max')),
    ])
    summary = lms.import_zip(zip_path, A, course)
    assert not summary.imported and not (course / 'submitted' / 'ada-lovelace').exists()
    assert summary.skipped[0][0] == 'ada-lovelace' and 'give a mapping file' in summary.skipped[0][1]


def test_zip_slip_is_refused(course, tmp_path):
    with zipfile.ZipFile(tmp_path / 'evil.zip', 'w') as zf:
        zf.writestr('lovelaceada_12345_6789012_noughts_and_crosses.ipynb', notebook('ada'))
        zf.writestr('../evil_1_2_noughts_and_crosses.ipynb', b'{}')
        zf.writestr('/tmp/evil_1_2_noughts_and_crosses.ipynb', b'{}')
        zf.writestr('evil_1_2_../../../escaped.ipynb', b'{}')
        zf.writestr('C:\\evil_1_2_noughts_and_crosses.ipynb', b'{}')
        link = zipfile.ZipInfo('linker_1_2_noughts_and_crosses.ipynb')
        link.external_attr = 0o120777 << 16
        zf.writestr(link, '/etc/passwd')
    summary = lms.import_zip(tmp_path / 'evil.zip', A, course)
    assert sorted(summary.refused) == sorted([
        ('../evil_1_2_noughts_and_crosses.ipynb', 'path with `..`'),
        ('/tmp/evil_1_2_noughts_and_crosses.ipynb', 'absolute path'),
        ('evil_1_2_../../../escaped.ipynb', 'path with `..`'),
        ('C:\\evil_1_2_noughts_and_crosses.ipynb', 'absolute path'),
        ('linker_1_2_noughts_and_crosses.ipynb', 'symbolic link'),
    ])
    assert [s for s, *_ in summary.imported] == ['lovelaceada']
    assert sorted(p.name for p in (course / 'submitted').iterdir()) == ['lovelaceada']
    assert not (tmp_path / 'escaped.ipynb').exists() and not (course / 'escaped.ipynb').exists()
    assert 'REFUSED ../evil_1_2_noughts_and_crosses.ipynb: path with `..`' in summary.format()


def test_a_file_over_the_courses_size_limit_is_skipped(course, tmp_path):
    """The importer holds each file to the course's nbgrader limit (`c.CourseDirectory.max_file_size`, in kB),
    as `make grade` does, and names what it skipped."""
    (course / 'nbgrader_config.py').write_text('c = get_config()\nc.CourseDirectory.max_file_size = 100\n')
    zip_path = make_zip(tmp_path / 'submissions.zip', [
        ('lovelaceada_12345_6789011_noughts_and_crosses.ipynb', notebook('ada')),
        ('lovelaceada_12345_6789012_helpers.py', b'#' * 100_000),
        ('lovelaceada_12345_6789013_data.csv', b'#' * 100_001),
    ])
    summary = lms.import_zip(zip_path, A, course)
    assert (submission(course, 'lovelaceada') / 'helpers.py').read_bytes() == b'#' * 100_000
    assert not (submission(course, 'lovelaceada') / 'data.csv').exists()
    assert summary.skipped == [('lovelaceada_12345_6789013_data.csv', 'cannot be read: larger than 100,000 bytes '
                                                                      '(c.CourseDirectory.max_file_size)')]


def test_a_large_class_zip_is_imported_a_megabyte_at_a_time(course, tmp_path):
    """A class's zip may hold gigabytes: the importer never holds a file of it in memory at once, let alone the
    whole zip. Here 240 MB of files (each within the limit) grow the importing process by a few megabytes."""
    big = b'\0' * (40 * 1024 ** 2)
    students = ('lovelaceada', 'babbagecharles', 'hopperg')
    zip_path = make_zip(tmp_path / 'submissions.zip', [entry for number, student in enumerate(students) for entry in (
        (f'{student}_{number}_1_noughts_and_crosses.ipynb', notebook('ada')),
        (f'{student}_{number}_2_recording.mp4', big), (f'{student}_{number}_3_dataset.bin', big))])
    script = (f'import resource, sys\nfrom coursetools.instructor import lms\n'
              f'before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n'
              f'lms.import_zip({str(zip_path)!r}, {A!r}, {str(course)!r})\n'
              f'print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n')
    run = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert int(run.stdout) < 30 * 1024, f'the import grew by {int(run.stdout) // 1024} MB'      # ru_maxrss is in kB
    for student in students:
        for name in ('recording.mp4', 'dataset.bin'):
            path = submission(course, student) / name
            assert path.stat().st_size == len(big) and hashlib.sha256(path.read_bytes()).digest() == \
                hashlib.sha256(big).digest()


def test_existing_submissions_newest_wins(course, tmp_path):
    first = make_zip(tmp_path / 'first.zip', [('lovelaceada_1_2_noughts_and_crosses.ipynb', notebook('ada'))])
    lms.import_zip(first, A, course)
    folder = submission(course, 'lovelaceada')

    again = lms.import_zip(make_zip(tmp_path / 'again.zip', [
        ('lovelaceada_1_3_noughts_and_crosses (1).ipynb', notebook('ada'), (2026, 11, 22, 0, 0, 0))]), A, course)
    assert again.unchanged == ['lovelaceada'] and not again.imported and not again.replaced

    older = lms.import_zip(make_zip(tmp_path / 'older.zip', [
        ('lovelaceada_1_3_noughts_and_crosses.ipynb', notebook('max'), (2026, 11, 19, 0, 0, 0))]), A, course)
    assert older.skipped and 'is not newer: kept the one there' in older.skipped[0][1]
    assert (folder / NB).read_bytes() == notebook('ada')

    newer = lms.import_zip(make_zip(tmp_path / 'newer.zip', [
        ('lovelaceada_1_4_noughts_and_crosses.ipynb', notebook('eve'), (2026, 11, 21, 0, 0, 0))]), A, course)
    assert [(s, old, new) for s, old, new, _ in newer.replaced] == [
        ('lovelaceada', WHEN_TEXT, '2026-11-21 00:00:00.000000 UTC')]
    assert (folder / NB).read_bytes() == notebook('eve')
    backup = course / newer.replaced[0][3]
    assert (backup / NB).read_bytes() == notebook('ada') and 'lms_replaced' in str(backup)
    assert not list((course / 'submitted').glob('*/.*')) and not list(course.glob('.lms-import-*'))

    forced = lms.import_zip(older.zip_path, A, course, replace=True)
    assert [s for s, *_ in forced.replaced] == ['lovelaceada']
    assert (folder / NB).read_bytes() == notebook('max')
    assert (folder / 'timestamp.txt').read_text().strip() == '2026-11-19 00:00:00.000000 UTC'


@pytest.mark.parametrize('written, kept', [('Nov 20 2026 10:00', False), ('2026-11-22 09:30:00 Europe/Paris', True),
                                           ('not a time', True)])
def test_an_existing_submission_is_as_old_as_nbgrader_reads_it(course, tmp_path, written, kept):
    """The import compares the zip's time with the one nbgrader reads in the existing timestamp.txt (a time typed
    by hand included); one nbgrader cannot read is not replaced without --replace."""
    lms.import_zip(make_zip(tmp_path / 'first.zip', [('lovelaceada_1_2_noughts_and_crosses.ipynb',
                                                      notebook('ada'))]), A, course)
    folder = submission(course, 'lovelaceada')
    (folder / 'timestamp.txt').write_text(written + '\n')
    newer = lms.import_zip(make_zip(tmp_path / 'newer.zip', [
        ('lovelaceada_1_4_noughts_and_crosses.ipynb', notebook('eve'), (2026, 11, 21, 0, 0, 0))]), A, course)
    assert (folder / NB).read_bytes() == notebook('ada' if kept else 'eve')
    if kept:
        old = 'an unknown time' if written == 'not a time' else '2026-11-22 08:30:00.000000 UTC'
        assert f'a different submission, of {old}, and the zip\'s' in newer.skipped[0][1]
    else:
        assert newer.replaced[0][1] == '2026-11-20 10:00:00.000000 UTC'


def run_cli(*args):
    return subprocess.run([sys.executable, '-m', 'coursetools.instructor.lms', *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)


def test_cli(course, tmp_path):
    zip_path = make_zip(tmp_path / 'canvas.zip', [('lovelaceada_1_2_noughts_and_crosses.ipynb', notebook('ada')),
                                                  ('lovelaceada_1_2_notes\x1b[2J\x1b[H.txt', b'a name to clear the screen')])
    dry = run_cli(zip_path, '--assignment', A, '--course', course, '--dry-run')
    assert dry.returncode == 0, dry.stderr
    assert 'would import lovelaceada' in dry.stdout and not (course / 'submitted').exists()
    assert 'notes\\x1b[2J\\x1b[H.txt' in dry.stdout and '\x1b' not in dry.stdout     # shown, never acted on
    done = run_cli(zip_path, '--assignment', A, '--course', course)
    assert done.returncode == 0 and 'imported: 1 new' in done.stdout
    assert (submission(course, 'lovelaceada') / NB).exists()
    # Without --assignment: the only assignment in source/, or the one the notebooks' names begin with.
    for assignment in (A, 'alpha_beta'):
        (course / 'source' / assignment).mkdir(parents=True)
        (course / 'source' / assignment / f'{assignment}.ipynb').write_text('{}')
    guessed = run_cli(make_zip(tmp_path / 'bb.zip', [
        ('Noughts_alovelace_attempt_2026-11-20-17-00-00_Noughts_and_Crosses (1).ipynb', notebook('ada'))]),
        '--course', course)
    assert guessed.returncode == 0 and f'assignment: {A}' in guessed.stdout, guessed.stderr
    assert (submission(course, 'alovelace') / 'Noughts_and_Crosses (1).ipynb').exists()
    unknown = run_cli(make_zip(tmp_path / 'x.zip', [('a_1_2_homework.ipynb', b'{}')]), '--course', course)
    assert unknown.returncode == 2 and '--assignment is needed' in unknown.stderr
    empty = run_cli(make_zip(tmp_path / 'other.zip', [('readme.md', b'hello')]), '--assignment', A, '--course', course)
    assert empty.returncode == 1 and 'no submission found' in empty.stderr
    broken = tmp_path / 'broken.zip'
    broken.write_bytes(b'not a zip')
    result = run_cli(broken, '--assignment', A, '--course', course)
    assert result.returncode == 1 and 'not a readable zip file' in result.stderr


def test_canvas_zip_of_three_students_is_graded_like_the_demo_class(tmp_path):
    course = copy_course(tmp_path / 'course', students=[])
    students = {'lovelaceada': 'ada', 'bitdiddledan': 'dan', 'maxwellmax': 'max'}
    mapping = tmp_path / 'roster.csv'
    mapping.write_text('lms_name,student_id\n' + ''.join(f'{n},{s}\n' for n, s in students.items()))
    # dan's browser saved the download again as `noughts_and_crosses (1).ipynb`: the grading's repair step finds it.
    names = {'ada': NB, 'dan': f'{A} (1).ipynb', 'max': NB}
    zip_path = make_zip(tmp_path / 'submissions.zip', [
        (f'{name}_{1000 + i}_{5000 + i}_{names[student]}', notebook(student))
        for i, (name, student) in enumerate(students.items())])
    summary = lms.import_zip(zip_path, A, course, mapping=mapping)
    assert sorted(s for s, *_ in summary.imported) == ['ada', 'dan', 'max'], summary.format()
    assert (submission(course, 'dan') / f'{A} (1).ipynb').exists()
    result = run_grade(course, A)
    assert result.returncode == 0, result.stdout + result.stderr
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), A)
    got = {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}
    assert got == {student: EXPECTED[student] for student in students.values()}
