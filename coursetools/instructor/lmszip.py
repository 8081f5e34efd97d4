"""Reading an LMS's "download all submissions" zip: which entries are safe, which LMS naming style each file name
is in (Moodle, Canvas, Blackboard, with Blackboard's receipts), the student id each LMS name becomes, and the
mapping file (roster) that can name them instead. lms.py imports what is read into submitted/."""
import csv
import dataclasses
import datetime
import hashlib
import re
import shutil
import unicodedata
import zipfile

SYSTEM_FILES = {'.ds_store', 'thumbs.db', 'desktop.ini'}
CHUNK = 1024 ** 2                  # bytes of an entry read at once

MOODLE = re.compile(r'^(?P<name>.+?)_(?P<number>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<rest>.*)$')
CANVAS = re.compile(r'^(?P<name>[^_]+?)(?P<late>_LATE)?_(?P<number>\d+)_(?P<attachment>\d+)_(?P<rest>.+)$')
BLACKBOARD = re.compile(r'^(?P<prefix>.+?)_attempt_(?P<attempt>\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)'
                        r'(?:_(?P<rest>.+)|(?P<ext>\.[^._]+))$')
RECEIPT_NAME = re.compile(r'^Name:\s*(?P<full>.*?)\s*\((?P<user>[^()\s]+)\)\s*$', re.MULTILINE)
RECEIPT_FILES = re.compile(r'Original filename:\s*(?P<original>.+?)\s*\n\s*Filename:\s*(?P<stored>.+?)\s*$',
                           re.MULTILINE)
STUDENT_ID = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')


def slugify(name):
    """`Zoë O'Neil-Smith` -> `zoe-o-neil-smith`: lower-case ASCII letters and digits, other runs become `-`."""
    ascii_name = unicodedata.normalize('NFKD', name).encode('ascii', 'ignore').decode()
    return re.sub(r'[^a-z0-9]+', '-', ascii_name.lower()).strip('-')


def name_key(name):
    """How names are compared (in the mapping too): runs of spaces as one, case folded."""
    return ' '.join(str(name).split()).casefold()


@dataclasses.dataclass
class Entry:
    """One student file in the zip."""
    zip_name: str
    style: str
    lms_name: str
    lms_number: str
    filename: str
    when: datetime.datetime
    attempt: str = ''
    late: bool = False
    digest: str = ''                # sha256 of its bytes, read once when the zip is scanned
    source: tuple = ()              # (zip path, ZipInfo, size limit): where `read` and `copy_to` find the bytes

    def read(self):
        """Its bytes (at most the size limit, which the scan checked)."""
        path, info, limit = self.source
        with zipfile.ZipFile(path) as zf:
            return _read(zf, info, limit)

    def copy_to(self, target):
        """Write its bytes to the file `target`, a megabyte at a time."""
        path, info, _ = self.source
        with zipfile.ZipFile(path) as zf, zf.open(info) as handle, open(target, 'wb') as out:
            shutil.copyfileobj(handle, out, CHUNK)


class LmsImportError(Exception):
    """The zip or the mapping file cannot be used at all."""


def read_mapping(path):
    """{normalised lms name: student id} from a CSV with columns lms_name,student_id."""
    mapping = {}
    with open(path, newline='', encoding='utf-8-sig') as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames or not {'lms_name', 'student_id'} <= {f.strip() for f in reader.fieldnames}:
            raise LmsImportError(f'{path}: the mapping file needs a header line `lms_name,student_id`')
        for number, row in enumerate(reader, start=2):
            row = {k.strip(): (v or '').strip() for k, v in row.items() if k}
            name, student = row['lms_name'], row['student_id']
            if not name and not student:
                continue
            if not STUDENT_ID.match(student) or '..' in student:
                raise LmsImportError(f'{path}:{number}: {student!r} is not a usable student id '
                                     '(letters, digits, `.`, `_`, `-`; starting with a letter or digit)')
            if mapping.get(name_key(name), student) != student:
                raise LmsImportError(f'{path}:{number}: {name!r} is mapped to both {mapping[name_key(name)]!r} '
                                     f'and {student!r}')
            mapping[name_key(name)] = student
    return mapping


def unsafe_reason(info):
    """Why a zip entry must not be extracted (zip-slip, links), or None."""
    name = info.filename.replace('\\', '/')
    if name.startswith('/') or re.match(r'^[A-Za-z]:', name):
        return 'absolute path'
    if '..' in name.split('/'):
        return 'path with `..`'
    if '\0' in name:
        return 'NUL in the name'
    if (info.external_attr >> 16) & 0o170000 == 0o120000:
        return 'symbolic link'
    return None


def _entry_time(info, zone):
    return datetime.datetime(*info.date_time, tzinfo=zone).astimezone(datetime.timezone.utc)


def parse_name(path, when, zone):
    """(style, lms_name, lms_number, filename, when, attempt, late) for one zip path, or None."""
    parts = [p for p in path.split('/') if p]
    # Moodle puts each student in a folder `Name_123_assignsubmission_file_` (or flat files with the same prefix);
    # the zip may also be wrapped in one more folder.
    for depth, part in enumerate(parts):
        match = MOODLE.match(part)
        if match:
            if match['rest'] and depth == len(parts) - 1:
                filename = match['rest']
            elif not match['rest'] and depth < len(parts) - 1:
                filename = parts[-1]
            else:
                continue
            return dict(style='moodle', lms_name=match['name'], lms_number=match['number'], filename=filename,
                        when=when, plugin=match['plugin'])
    base = parts[-1]
    match = BLACKBOARD.match(base)
    if match:
        attempt = datetime.datetime.strptime(match['attempt'], '%Y-%m-%d-%H-%M-%S').replace(tzinfo=zone)
        return dict(style='blackboard', prefix=match['prefix'], lms_name='', lms_number='', attempt=match['attempt'],
                    filename=match['rest'] or '', ext=match['ext'] or '',
                    when=attempt.astimezone(datetime.timezone.utc))
    match = CANVAS.match(base)
    if match:
        return dict(style='canvas', lms_name=match['name'], lms_number=match['number'], filename=match['rest'],
                    when=when, late=bool(match['late']))
    return None


def _chunks(zf, info, limit):
    """An entry a megabyte at a time (its checksum checked at the end); ValueError once past `limit` bytes, so
    no more of it is ever read."""
    size = 0
    with zf.open(info) as handle:
        while chunk := handle.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise ValueError(f'larger than {limit:,} bytes (c.CourseDirectory.max_file_size)')
            yield chunk


def _read(zf, info, limit):
    return b''.join(_chunks(zf, info, limit))


def _scan(zf, info, limit):
    """The sha256 of an entry, with only one chunk of it in memory at a time."""
    digest = hashlib.sha256()
    for chunk in _chunks(zf, info, limit):
        digest.update(chunk)
    return digest.hexdigest()


def read_entries(zip_path, summary, zone, max_bytes):
    """The student files of the zip as Entry objects; refused/skipped entries go into `summary`."""
    try:
        zf = zipfile.ZipFile(zip_path)
    except (OSError, zipfile.BadZipFile) as error:
        raise LmsImportError(f'{zip_path}: not a readable zip file ({error})')
    entries, receipts, blackboard = [], {}, []
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            reason = unsafe_reason(info)
            if reason:
                summary.refused.append((info.filename, reason))
                continue
            path = info.filename.replace('\\', '/')
            base = path.rsplit('/', 1)[-1]
            if path.startswith('__MACOSX/') or base.lower() in SYSTEM_FILES or base.startswith('._'):
                continue  # archive-tool litter, not a submission
            parsed = parse_name(path, _entry_time(info, zone), zone)
            if parsed is None:
                summary.skipped.append((info.filename, 'file name is in no known LMS style (Moodle, Canvas, '
                                                      'Blackboard)'))
                continue
            try:
                receipt = parsed['style'] == 'blackboard' and not parsed['filename'] and \
                    parsed['ext'].lower() == '.txt'
                text = _read(zf, info, max_bytes).decode('utf-8', 'replace') if receipt else ''
                digest = _scan(zf, info, max_bytes)
            except (ValueError, zipfile.BadZipFile, OSError, NotImplementedError) as error:
                summary.skipped.append((info.filename, f'cannot be read: {error}'))
                continue
            if RECEIPT_NAME.search(text):
                receipts[(parsed['prefix'], parsed['attempt'])] = text
                continue
            if parsed['style'] == 'moodle' and parsed.pop('plugin') != 'file':
                summary.skipped.append((info.filename, 'not a file submission (Moodle online text, comments...)'))
                continue
            entry = Entry(zip_name=info.filename, digest=digest, source=(zip_path, info, max_bytes),
                          **{k: v for k, v in parsed.items() if k in Entry.__dataclass_fields__})
            if parsed['style'] == 'blackboard':
                blackboard.append((entry, parsed))
            entries.append(entry)
    for entry, parsed in blackboard:  # the user name and original file name, helped by the receipt
        receipt = receipts.get((parsed['prefix'], parsed['attempt']), '')
        user = RECEIPT_NAME.search(receipt)
        if user and (parsed['prefix'] == user['user'] or parsed['prefix'].endswith('_' + user['user'])):
            entry.lms_name = user['user']
        else:
            entry.lms_name = parsed['prefix'].rsplit('_', 1)[-1]
        if not entry.filename:
            stored = {m['stored']: m['original'] for m in RECEIPT_FILES.finditer(receipt)}
            entry.filename = stored.get(entry.zip_name.rsplit('/', 1)[-1], entry.zip_name.rsplit('/', 1)[-1])
    return entries


def student_id_of(entry, mapping):
    """(student id, None) or (None, reason)."""
    if mapping is not None:
        for key in (entry.lms_name, entry.lms_number, slugify(entry.lms_name)):
            if key and name_key(key) in mapping:
                return mapping[name_key(key)], None
        return None, 'unmatched'
    if entry.style == 'moodle' and name_key(entry.lms_name) == 'participant':  # Moodle's blind marking
        return f'participant-{entry.lms_number}', None
    slug = slugify(entry.lms_name)
    if slug:
        return slug, None
    if entry.lms_number:
        return f'{entry.style}-{entry.lms_number}', None
    return None, f'no student id can be made from the name {entry.lms_name!r}: give a mapping file'
