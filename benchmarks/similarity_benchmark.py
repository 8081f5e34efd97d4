"""Does the similarity report find the copiers and leave the honest students alone, and what does it cost?

    .venv/bin/python benchmarks/similarity_benchmark.py [--seeds 1 2 3] [--size 60] [--minimum 150]

For each seed, a made-up class of --size (grader_tests/similarity_class.py: six byte-identical copies of the usual
answers, six copier pairs, honest students in their own styles, sixteen of them with common mistakes) is written
as notebooks in a temporary course and compared as `make grade` compares it (`similarity.write_similarity`). It
prints the copier pairs found (and their ranks among the pairs), the honest pairs flagged, the honest pairs
labelled possible common mistakes, the most an honest pair shares and the least a copier pair does, and the
seconds the report took (reading the notebooks, comparing, writing the page; the imports of nbgrader and
copydetect, paid once per process and already paid inside `make grade`, are made before the clock starts).
"""
import argparse
import itertools
import pathlib
import sys
import tempfile
import time


ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'grader_tests'))
from coursetools.instructor import similarity  # noqa: E402
from similarity_class import make_class, small_class  # noqa: E402  (grader_tests/similarity_class.py)

A = 'noughts_and_crosses'


def copied_pairs(made):
    return {tuple(sorted(pair)) for group in made.groups for pair in itertools.combinations(group, 2)}


def measure(seed, size, minimum):
    from coursetools.instructor import repair  # noqa: F401  (nbgrader: imported before the clock starts)
    similarity.fingerprint('')
    made = make_class(seed, size)
    with tempfile.TemporaryDirectory() as folder:
        course = small_class(pathlib.Path(folder), made.answers, A)
        started = time.perf_counter()
        similarity.write_similarity(course, A, minimum)
        seconds = time.perf_counter() - started
        pairs = similarity.analyse(course, A, minimum)['pairs']
    copies = copied_pairs(made)
    rank = {(p.first, p.second): n for n, p in enumerate(pairs, 1)}
    found = [pair for pair in copies if pair in rank and pairs[rank[pair] - 1].flagged]
    honest = [p for p in pairs if (p.first, p.second) not in copies]
    return dict(seed=seed, copies=len(copies), found=len(found), ranks=sorted(rank[p] for p in found),
                false=[(p.first, p.second, p.overlap) for p in honest if p.flagged],
                mistakes=sum(p.kind == 'mistake' for p in honest),
                listed=sum(p.kind == 'mistake' and max(p.similarity) >= similarity.SHOWN for p in honest),
                honest_most=max((p.overlap for p in honest), default=0),
                copier_least=min((p.overlap for p in pairs if (p.first, p.second) in copies and p.kind == 'copied'),
                                 default=0),
                identical=[len(g) for g in similarity.groups(pairs)], seconds=seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--seeds', type=int, nargs='+', default=[1, 2, 3])
    parser.add_argument('--size', type=int, default=60)
    parser.add_argument('--minimum', type=int, default=similarity.MINIMUM)
    args = parser.parse_args()
    print(f'class of {args.size}, minimum shared size {args.minimum} characters')
    for seed in args.seeds:
        r = measure(seed, args.size, args.minimum)
        print(f"seed {r['seed']}: copier pairs found {r['found']}/{r['copies']} (ranks {r['ranks']}); honest pairs "
              f"flagged {len(r['false'])} {r['false']}; honest pairs labelled possible common mistake "
              f"{r['mistakes']} (listed on the page: {r['listed']}); most an honest pair shares {r['honest_most']}, least a renamed copier pair shares "
              f"{r['copier_least']}; identical groups {r['identical']}; report {r['seconds']:.2f} s")


if __name__ == '__main__':
    main()
