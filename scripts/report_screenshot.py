"""Screenshot of the grading report for the README: docs/images/report.png.

    .venv/bin/python scripts/report_screenshot.py [--course DIR] [--assignment A] [--db URL] [--out PNG]

The course must have been graded (`make grade`; the default course is this checkout). The report is (re)written with
coursetools.instructor.report and rendered by Debian's chromium (/usr/bin/chromium) in headless mode through Playwright.
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from coursetools.instructor import report  # noqa: E402

CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run']


def screenshot(html_path, out, width=1180, max_height=1500):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={'width': width, 'height': 800}, device_scale_factor=1)
            page.goto(pathlib.Path(html_path).resolve().as_uri())
            page.wait_for_load_state('load')
            height = min(page.evaluate('document.documentElement.scrollHeight'), max_height)
            page.set_viewport_size({'width': width, 'height': height})
            page.screenshot(path=str(out), full_page=False)
        finally:
            browser.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--course', default=str(ROOT), help='a graded course folder (default: this checkout)')
    parser.add_argument('--assignment', default='noughts_and_crosses')
    parser.add_argument('--db', help='gradebook URL (default: gradebook.db in the course)')
    parser.add_argument('--out', default=str(ROOT / 'docs' / 'images' / 'report.png'))
    args = parser.parse_args(argv)
    course = pathlib.Path(args.course)
    if not args.db and not (course / 'gradebook.db').exists():
        raise SystemExit(f'{course} has not been graded (no gradebook.db): run `make grade` first')
    html_path = report.write_report(course, args.assignment, args.db)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    screenshot(html_path, args.out)
    print(f'{html_path} -> {args.out}')


if __name__ == '__main__':
    main()
