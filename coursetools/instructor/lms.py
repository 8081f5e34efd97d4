"""Import an LMS's "download all submissions" zip into nbgrader's submitted/ folder.

    python -m coursetools.instructor.lms ZIP --assignment noughts_and_crosses [--mapping map.csv] [--course DIR]
                              [--replace] [--timezone Europe/London] [--dry-run]
    make grade SUBMISSIONS=path/to/lms-download.zip [MAPPING=map.csv]

Three naming styles are recognised, entry by entry (docs/lms.md has the details):

* Moodle:     `Ada Lovelace_1234567_assignsubmission_file_/noughts_and_crosses.ipynb` (one folder per student) or
              `Ada Lovelace_1234567_assignsubmission_file_noughts_and_crosses.ipynb` (flat);
* Canvas:     `lovelaceada_12345_6789012_noughts_and_crosses.ipynb`, `lovelaceada_LATE_12345_6789012_...`;
* Blackboard: `Noughts and crosses_alovelace_attempt_2026-11-20-17-00-00_noughts_and_crosses.ipynb`, with a
              `..._attempt_2026-11-20-17-00-00.txt` receipt (its `Name: Ada Lovelace (alovelace)` line is used to
              find the user name when the assignment's name has underscores).

The student id is the LMS name slugified (lower-case ASCII letters and digits, other runs become `-`):
`Ada Lovelace` -> `ada-lovelace`, `lovelaceada`, `alovelace`; or, with --mapping, the `student_id` of the row whose
`lms_name` is that name (or the LMS's number for the student: Moodle participant id, Canvas user id). With a mapping,
names it does not list are not imported and are reported as unmatched.

Each submission becomes submitted/<student>/<assignment>/ with the student's files under their original names (a
browser-renamed `noughts_and_crosses (1).ipynb` is kept as it is) plus timestamp.txt: the attempt's time for
Blackboard, else the newest zip entry time, read in --timezone (the LMS server's zone; default UTC) and written in UTC.
Supporting files of the release (the widget module) that the student did not upload are copied in, as if the student
had submitted the whole release folder.

An existing, different submission of the same student is replaced only by a newer one (newest wins, by timestamp)
or with --replace; the old folder is moved to lms_replaced/<import time>/<student>/<assignment>/, never deleted.
A submission whose files are all already there (same bytes, any names) is left alone. Entries with absolute paths,
`..` or symlinks (zip-slip) are refused and reported.
"""
import argparse
import dataclasses
import datetime
import hashlib
import json
import os
import pathlib
import shutil
import tempfile
import zoneinfo

from coursetools.grading.course import Course
from coursetools.grading.progress import printable_lines
from coursetools.instructor.repair import size_limits, time_submitted
from coursetools.instructor.lmszip import (STUDENT_ID, LmsImportError, name_key, read_entries,
                                           read_mapping, student_id_of)

TIMESTAMP_FORMAT = '%Y-%m-%d %H:%M:%S.%f UTC'


@dataclasses.dataclass
class ImportSummary:
    zip_path: str
    assignment: str
    styles: dict = dataclasses.field(default_factory=dict)      # style: number of files
    imported: list = dataclasses.field(default_factory=list)    # (student, [files], timestamp, note)
    replaced: list = dataclasses.field(default_factory=list)    # (student, old timestamp, new timestamp, backup)
    unchanged: list = dataclasses.field(default_factory=list)   # students whose submission was already there
    skipped: list = dataclasses.field(default_factory=list)     # (what, reason)
    refused: list = dataclasses.field(default_factory=list)     # (zip entry, reason): unsafe entries
    unmatched: list = dataclasses.field(default_factory=list)   # LMS names the mapping does not list
    not_submitted: list = dataclasses.field(default_factory=list)  # mapping's students without a submission
    late: list = dataclasses.field(default_factory=list)        # students the LMS marked late
    warnings: list = dataclasses.field(default_factory=list)
    dry_run: bool = False

    @property
    def found_any(self):
        return bool(self.imported or self.replaced or self.unchanged)

    def format(self):
        verb = 'would import' if self.dry_run else 'imported'
        styles = ', '.join(f'{style} ({n} files)' for style, n in sorted(self.styles.items())) or 'none recognised'
        lines = [f'{self.zip_path} -> submitted/<student>/{self.assignment}/   styles: {styles}',
                 f'{verb}: {len(self.imported)} new, {len(self.replaced)} replaced, {len(self.unchanged)} unchanged, '
                 f'{len(self.skipped)} skipped, {len(self.refused)} refused, {len(self.unmatched)} unmatched names']
        for student, files, timestamp, note in self.imported:
            lines.append(f'  {verb} {student}: {", ".join(files)}  ({timestamp}){"  " + note if note else ""}')
        for student, old, new, backup in self.replaced:
            lines.append(f'  replaced {student}: submission of {old} by the zip\'s of {new}; old one kept in {backup}')
        if self.unchanged:
            lines.append(f'  unchanged (already in submitted/): {", ".join(self.unchanged)}')
        if self.late:
            lines.append(f'  marked late by the LMS: {", ".join(self.late)}')
        for what, reason in self.skipped:
            lines.append(f'  skipped {what}: {reason}')
        for what, reason in self.refused:
            lines.append(f'  REFUSED {what}: {reason}')
        if self.unmatched:
            lines.append(f'  unmatched names (not in the mapping file, not imported): {", ".join(self.unmatched)}')
        if self.not_submitted:
            lines.append(f'  in the mapping file but no submission in the zip: {", ".join(self.not_submitted)}')
        for warning in self.warnings:
            lines.append(f'  warning: {warning}')
        return '\n'.join(lines)


def _safe_filename(name):
    name = name.replace('\\', '/').rsplit('/', 1)[-1]
    return None if name in ('', '.', '..', 'timestamp.txt') or '\0' in name else name


def _digest(path):
    with open(path, 'rb') as f:
        return hashlib.file_digest(f, 'sha256').hexdigest()


def import_zip(zip_path, assignment, course=None, mapping=None, replace=False, timezone='UTC', dry_run=False,
               max_bytes=None):
    """Import an LMS zip into <course>/submitted/; returns an ImportSummary (print its .format()). A file over
    `max_bytes` (by default the course's `c.CourseDirectory.max_file_size`, as `make grade` holds it) is skipped."""
    course = pathlib.Path(course).resolve() if course else Course.at().root
    max_bytes = max_bytes or size_limits(course).file
    try:
        zone = zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise LmsImportError(f'unknown time zone {timezone!r} (use an IANA name such as Europe/London)')
    if not STUDENT_ID.match(assignment) or '..' in assignment:
        raise LmsImportError(f'{assignment!r} is not an assignment id')
    table = read_mapping(mapping) if mapping else None
    summary = ImportSummary(zip_path=str(zip_path), assignment=assignment, dry_run=dry_run)
    entries = read_entries(zip_path, summary, zone, max_bytes)

    # Group the files by student and attempt.
    groups, identities, unmatched = {}, {}, {}
    for entry in entries:
        summary.styles[entry.style] = summary.styles.get(entry.style, 0) + 1
        student, reason = student_id_of(entry, table)
        if student is None:
            if reason == 'unmatched':
                unmatched.setdefault(entry.lms_name, None)
            else:
                summary.skipped.append((entry.zip_name, reason))
            continue
        identities.setdefault(student, set()).add((entry.style, name_key(entry.lms_name), entry.lms_number))
        groups.setdefault(student, {}).setdefault(entry.attempt, []).append(entry)
    summary.unmatched = list(unmatched)

    submitted = course / 'submitted'
    release = course / 'release' / assignment
    extras = sorted(p for p in release.rglob('*') if p.is_file() and p.suffix not in ('.ipynb', '.pyc')
                    and '__pycache__' not in p.parts) if release.is_dir() else []
    stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
    for student in sorted(groups):
        if len(identities[student]) > 1:
            who = '; '.join(f'{name} ({style} {number})'.replace(' )', ')')
                            for style, name, number in sorted(identities[student]))
            summary.skipped.append((student, f'{len(identities[student])} different LMS users have this id ({who}): '
                                             'give a mapping file'))
            continue
        attempts = groups[student]
        newest = max(attempts, key=lambda a: max(e.when for e in attempts[a]))
        for attempt in attempts:
            if attempt != newest:
                summary.skipped.append((f'{student} attempt {attempt}', 'an older attempt; the newest is imported'))
        files, when = {}, max(e.when for e in attempts[newest])
        for entry in sorted(attempts[newest], key=lambda e: e.when):
            name = _safe_filename(entry.filename)
            if name is None:
                summary.skipped.append((entry.zip_name, f'unusable file name {entry.filename!r}'))
                continue
            if name in files and files[name].digest != entry.digest:
                summary.warnings.append(f'{student}: two files named {name}; the later one is kept')
            files[name] = entry
        if not any(name.lower().endswith('.ipynb') for name in files):
            summary.skipped.append((student, f'no notebook among the files ({", ".join(sorted(files)) or "none"})'))
            continue
        for name, entry in files.items():
            if name.lower().endswith('.ipynb'):
                try:
                    json.loads(entry.read().decode('utf-8'))
                except (UnicodeDecodeError, ValueError, RecursionError):
                    summary.warnings.append(f'{student}: {name} cannot be read as notebook JSON (imported as it is)')
        if any(e.late for e in attempts[newest]):
            summary.late.append(student)
        timestamp = when.astimezone(datetime.timezone.utc).strftime(TIMESTAMP_FORMAT)

        folder = submitted / student / assignment
        if not folder.resolve().is_relative_to(submitted.resolve()):
            summary.refused.append((student, 'the submission folder would be outside submitted/'))
            continue
        note, backup = '', None
        if folder.exists():
            have = {_digest(p) for p in folder.iterdir() if p.is_file() and p.name != 'timestamp.txt'}
            if {entry.digest for entry in files.values()} <= have:
                summary.unchanged.append(student)
                continue
            old = time_submitted(folder)
            old_text = old.strftime(TIMESTAMP_FORMAT) if old else 'an unknown time'
            if not replace and (old is None or when <= old):
                summary.skipped.append((student, f'submitted/ already has a different submission, of {old_text}, '
                                                 f'and the zip\'s ({timestamp}) is not newer: kept the one there '
                                                 '(--replace takes the zip\'s)'))
                continue
            backup = course / 'lms_replaced' / stamp / student / assignment
            summary.replaced.append((student, old_text, timestamp, str(backup.relative_to(course))))
        else:
            summary.imported.append((student, sorted(files), timestamp, note))
        if dry_run:
            continue
        for extra in extras:  # the release's supporting files, as if the whole release folder was submitted
            files.setdefault(str(extra.relative_to(release)), extra)
        scratch = pathlib.Path(tempfile.mkdtemp(prefix='.lms-import-', dir=course))
        try:
            for name, source in files.items():
                (scratch / name).parent.mkdir(parents=True, exist_ok=True)
                if isinstance(source, pathlib.Path):
                    shutil.copyfile(source, scratch / name)     # a file of the release
                else:
                    source.copy_to(scratch / name)
            (scratch / 'timestamp.txt').write_text(timestamp + '\n')
            if backup is not None:
                backup.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(folder), str(backup))
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.replace(scratch, folder)
            folder.chmod(0o755)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    if table is not None:
        found = set(groups)
        summary.not_submitted = sorted(set(table.values()) - found)
    return summary


def guess_assignment(zip_path, assignments, max_bytes):
    """The one assignment whose id begins the name of every notebook in the zip (case-insensitive), or None."""
    entries = read_entries(zip_path, ImportSummary(zip_path=str(zip_path), assignment=''), datetime.timezone.utc,
                           max_bytes)
    names = [e.filename.casefold() for e in entries if e.filename.lower().endswith('.ipynb')]
    fits = [a for a in assignments if names and all(n.startswith(a.casefold()) for n in names)]
    return max(fits, key=len) if fits else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('zip', help="the LMS's download of all submissions (.zip)")
    parser.add_argument('--assignment', help='assignment id (default: the only assignment in source/, or the one '
                                             'whose id begins the name of every notebook in the zip)')
    parser.add_argument('--mapping', help='CSV file with columns lms_name,student_id')
    parser.add_argument('--course', help='course folder (default: the current folder)')
    parser.add_argument('--replace', action='store_true',
                        help='replace an existing different submission even when the zip\'s is not newer')
    parser.add_argument('--timezone', default='UTC',
                        help='time zone of the times in the zip (the LMS server\'s; default UTC)')
    parser.add_argument('--dry-run', action='store_true', help='only report what would be imported')
    args = parser.parse_args(argv)
    course = pathlib.Path(args.course).resolve() if args.course else Course.at().root
    assignment = args.assignment
    try:
        if not assignment:
            found = sorted(p.name for p in (course / 'source').glob('*') if (p / f'{p.name}.ipynb').exists())
            assignment = found[0] if len(found) == 1 else guess_assignment(args.zip, found, size_limits(course).file)
            if not assignment:
                parser.error(f'--assignment is needed (assignments in source/: {", ".join(found) or "none"})')
            print(f'assignment: {assignment}')
        summary = import_zip(args.zip, assignment, course, mapping=args.mapping, replace=args.replace,
                             timezone=args.timezone, dry_run=args.dry_run)
    except LmsImportError as error:
        raise SystemExit(f'LMS import failed: {error}')
    print(printable_lines(summary.format()))
    if not summary.found_any:
        raise SystemExit('LMS import: no submission found in the zip (is it the "download all submissions" zip?)')


if __name__ == '__main__':
    main()
