"""How long a student waits for feedback from the grading service (`make serve`): the latency from `nbgrader submit`
to the feedback page being fetchable (in the exchange's feedback folder, where `nbgrader fetch_feedback` looks),
for a lone submission (three, one after another) and for a deadline burst (40 students handing in over one minute,
the demo class's answers in turn), on a copy of the course, with the real service, engine and sandbox.

    .venv/bin/python benchmarks/service_benchmark.py [--burst 40] [--seconds 60] [--lone 3]

The goal (issue 45): p95 <= 60 s for the burst, <= 20 s for a lone submission.
"""
import argparse
import os
import pathlib
import re
import signal
import statistics
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'grader_tests'))
from service_class import ASSIGNMENT, COURSE_ID, answers, exchange_course, start_service, submit  # noqa: E402

DEMO = sorted(p.stem for p in (ROOT / 'demo_class' / ASSIGNMENT).glob('*.py'))


def feedback_path(course, home, folder):
    """Where the feedback of the submission `folder` (its name in the inbound folder) is released."""
    from nbgrader.utils import notebook_hash
    secret = (course / 'exchange' / COURSE_ID / 'inbound' / folder / 'submission_secret.txt').read_text()
    return course / 'exchange' / COURSE_ID / 'feedback' / (notebook_hash(secret=secret, notebook_id=ASSIGNMENT)
                                                            + '.html')


def latency(course, home, student, answers_of, done):
    """Submit, then wait until the feedback is fetchable; its latency into `done`."""
    started = time.monotonic()
    folder = submit(course, home, student, answers(answers_of))
    page = feedback_path(course, home, folder)
    while not page.exists():
        time.sleep(0.05)
    done[student] = time.monotonic() - started


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--burst', type=int, default=40)
    parser.add_argument('--seconds', type=float, default=60)
    parser.add_argument('--lone', type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix='service-bench-') as folder:
        folder = pathlib.Path(folder)
        course = exchange_course(folder)
        service = start_service(course, '--no-pages')
        try:
            lone = {}
            for number in range(args.lone):
                latency(course, folder / f'lone{number}', f'lone{number}', DEMO[number % len(DEMO)], lone)
            burst, threads = {}, []
            began = time.monotonic()
            for number in range(args.burst):
                time.sleep(max(0.0, began + number * args.seconds / args.burst - time.monotonic()))
                student = f's{number:02d}'
                thread = threading.Thread(target=latency, args=(course, folder / student, student,
                                                                DEMO[number % len(DEMO)], burst))
                thread.start()
                threads.append(thread)
            for thread in threads:
                thread.join(600)
            wall = time.monotonic() - began
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(60)
            os.killpg(service.pid, signal.SIGKILL) if service.poll() is None else None
        log = (course / 'service.log').read_text()
    print(f'Grading service, on {os.cpu_count()} cores: latency from `nbgrader submit` to fetchable feedback')
    print(f'  lone submission ({len(lone)}, one after another): ' +
          ', '.join(f'{v:.1f} s' for v in lone.values()) + f'; median {statistics.median(lone.values()):.1f} s')
    values = list(burst.values())
    print(f'  burst: {len(values)} of {args.burst} submissions over {args.seconds:g} s, all graded '
          f'{wall:.0f} s after the first was handed in')
    print(f'    median {statistics.median(values):.1f} s, p95 {percentile(values, 0.95):.1f} s, '
          f'max {max(values):.1f} s, min {min(values):.1f} s')
    sizes = [int(n) + 1 for n in re.findall(r'with (\d+) other', log)]
    batches = round(sum(1 / size for size in sizes))
    print(f'  {batches} gradings (batches of up to {max(sizes)}); load average {os.getloadavg()[0]:.1f}; '
          'goal: p95 <= 60 s (burst), <= 20 s (lone)')


if __name__ == '__main__':
    main()
