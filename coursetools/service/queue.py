"""The grading service's queue: one row per submission found in the exchange's inbound folder, in a table of the
gradebook's own database (`service_submissions`: SQLite by default, PostgreSQL when the gradebook is there), so
that it outlives the service.

A row goes queued → grading → graded, or → refused (with the reason, and for an attempt over the limit the time
from which the next one is graded). It is claimed in one transaction (an UPDATE of queued rows, `claim`), so no
two claims take the same row. A row left `grading` by a service that died (`kill -9`) is queued again when the
service starts (`recover`): its grading is done again from the start, and only a grading that finished is counted
(`gradings`, set in the transaction that marks it graded). nbgrader's autograde replaces a student's earlier
marks, so a grading done twice leaves one set of marks.

SQLite waits up to `BUSY_SECONDS` for another writer (`make grade`, formgrader) instead of failing."""
from __future__ import annotations

import time
import uuid

import sqlalchemy as sa

STATES = ('queued', 'grading', 'graded', 'refused')
BUSY_SECONDS = 60

metadata = sa.MetaData()
submissions = sa.Table(
    'service_submissions', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('folder', sa.String(1024), nullable=False, unique=True),     # its name in the inbound folder
    sa.Column('student', sa.String(255), nullable=False),
    sa.Column('assignment', sa.String(255), nullable=False),
    sa.Column('submitted_at', sa.Float, nullable=False),      # Unix time, from the folder's name (nbgrader's)
    sa.Column('state', sa.String(16), nullable=False, default='queued'),
    sa.Column('reason', sa.Text, nullable=False, default=''),
    sa.Column('not_before', sa.Float),            # refused over the limit: the next attempt is graded from then
    sa.Column('queued_at', sa.Float, nullable=False),
    sa.Column('started_at', sa.Float),
    sa.Column('finished_at', sa.Float),
    sa.Column('claim', sa.String(32)),
    sa.Column('claims', sa.Integer, nullable=False, default=0),         # times a grading of it was begun
    sa.Column('gradings', sa.Integer, nullable=False, default=0),       # times a grading of it finished
    sa.Column('score', sa.Float),
    sa.Column('max_score', sa.Float),
    sa.Column('seconds', sa.Float),               # from its submission to its feedback released
)


def engine_for(db_url):
    """An SQLAlchemy engine on the gradebook's database; SQLite waits for a busy database."""
    if db_url.startswith('sqlite'):
        return sa.create_engine(db_url, connect_args={'timeout': BUSY_SECONDS})
    return sa.create_engine(db_url, pool_pre_ping=True)


class Queue:
    def __init__(self, db_url):
        self.engine = engine_for(db_url)
        metadata.create_all(self.engine, checkfirst=True)

    def close(self):
        self.engine.dispose()

    def add(self, found):
        """Queue each submission of `found` [(folder, student, assignment, submitted_at)] not queued before;
        returns those newly queued."""
        added = []
        with self.engine.begin() as db:
            known = {row.folder for row in db.execute(sa.select(submissions.c.folder).where(
                submissions.c.folder.in_([f[0] for f in found])))} if found else set()
            now = time.time()
            for folder, student, assignment, submitted_at in found:
                if folder in known:
                    continue
                known.add(folder)
                db.execute(submissions.insert().values(folder=folder, student=student, assignment=assignment,
                                                       submitted_at=submitted_at, state='queued', reason='',
                                                       queued_at=now, claims=0, gradings=0))
                added.append((folder, student, assignment, submitted_at))
        return added

    def recover(self):
        """Queue again every row left `grading` (its service died): how many."""
        with self.engine.begin() as db:
            return db.execute(submissions.update().where(submissions.c.state == 'grading').values(
                state='queued', claim=None)).rowcount

    def claim(self, limit):
        """Claim up to `limit` queued rows of one assignment (the one queued first), oldest submissions first,
        in one transaction: [row], each now `grading`."""
        token = uuid.uuid4().hex
        with self.engine.begin() as db:
            first = db.execute(sa.select(submissions.c.assignment).where(submissions.c.state == 'queued')
                               .order_by(submissions.c.id).limit(1)).scalar()
            if first is None:
                return []
            chosen = sa.select(submissions.c.id).where(submissions.c.state == 'queued',
                                                        submissions.c.assignment == first) \
                .order_by(submissions.c.submitted_at, submissions.c.id).limit(limit).scalar_subquery()
            db.execute(submissions.update().where(submissions.c.state == 'queued', submissions.c.id.in_(chosen))
                       .values(state='grading', claim=token, started_at=time.time(),
                               claims=submissions.c.claims + 1))
            return list(db.execute(sa.select(submissions).where(submissions.c.claim == token,
                                                                 submissions.c.state == 'grading')
                                   .order_by(submissions.c.submitted_at, submissions.c.id)))

    def finish(self, row_id, state, reason='', score=None, max_score=None, not_before=None):
        """Row `row_id`, claimed, is now `state` (graded or refused); False if it was not being graded."""
        assert state in ('graded', 'refused')
        values = dict(state=state, reason=reason, score=score, max_score=max_score, not_before=not_before,
                      finished_at=time.time(), claim=None)
        if state == 'graded':
            values['gradings'] = submissions.c.gradings + 1
        with self.engine.begin() as db:
            row = db.execute(sa.select(submissions.c.submitted_at).where(submissions.c.id == row_id)).first()
            if row is None:
                return False
            values['seconds'] = values['finished_at'] - row.submitted_at
            return db.execute(submissions.update().where(submissions.c.id == row_id,
                                                         submissions.c.state == 'grading')
                              .values(**values)).rowcount == 1

    def unclaim(self, row_ids):
        """Rows claimed but not graded (the service is stopping): queued again, as they were."""
        if row_ids:
            with self.engine.begin() as db:
                db.execute(submissions.update().where(submissions.c.id.in_(list(row_ids)),
                                                      submissions.c.state == 'grading')
                           .values(state='queued', claim=None))

    def graded_since(self, student, assignment, since):
        """Submitted times of `student`'s graded submissions of `assignment` submitted at or after `since`."""
        with self.engine.connect() as db:
            return sorted(r.submitted_at for r in db.execute(sa.select(submissions.c.submitted_at).where(
                submissions.c.student == student, submissions.c.assignment == assignment,
                submissions.c.state == 'graded', submissions.c.submitted_at >= since)))

    def latest_graded(self, student, assignment):
        """The latest graded row of `student`'s `assignment`, or None."""
        with self.engine.connect() as db:
            return db.execute(sa.select(submissions).where(
                submissions.c.student == student, submissions.c.assignment == assignment,
                submissions.c.state == 'graded').order_by(submissions.c.submitted_at.desc()).limit(1)).first()

    def rows(self, student=None):
        """Every row (or `student`'s), newest first."""
        query = sa.select(submissions).order_by(submissions.c.id.desc())
        if student is not None:
            query = query.where(submissions.c.student == student)
        with self.engine.connect() as db:
            return list(db.execute(query))

    def counts(self):
        """{state: rows in it}."""
        with self.engine.connect() as db:
            found = {state: count for state, count in db.execute(
                sa.select(submissions.c.state, sa.func.count()).group_by(submissions.c.state))}
        return {state: found.get(state, 0) for state in STATES}
