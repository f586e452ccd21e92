#!/usr/bin/env python3
"""Runs rdma-core's own Python test suite (the tests/ directory python3-pyverbs ships) and
records every test's outcome, so that the conformance suite can compare a native run with one
under `rdmaproxy run` test by test.

    rdma_core_tests.py --tests-dir DIR --results FILE [--only TEST_ID]... --dev DEV --gid N

DIR is a copy of rdma-core's tests/ (a package named "tests": its modules import each other as
tests.base, tests.utils). Loading mirrors rdma-core's run_tests.py: the package's load_tests()
picks the modules, and its args_parser takes --dev/--port/--gid. FILE gets one line per test
the runner reported, "<outcome> <test id>", outcome one of ok, skip, fail, error, xfail,
xpass; the outcome is the test's, not a log line's, so the harness writing its own lines to
the same stderr cannot blur it. --only (repeatable) runs just those test ids (a rerun of the
ones whose outcomes differed). Exit status: 0 when the suite ran (whatever its outcomes), 2
when it could not be loaded.
"""
import argparse
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader


class OutcomeRecorder(unittest.TextTestResult):
    """A TextTestResult that also remembers each test's outcome under its id."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = {}

    def _record(self, test, outcome):
        self.outcomes[test.id()] = outcome

    def addSubTest(self, test, subtest, err):
        # A failed subtest makes the test's outcome (unittest then reports no success for it).
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._record(test, 'fail' if failed else 'error')


# unittest's result hooks and the outcome each records: one entry per hook.
OUTCOME_OF_HOOK = {
    'addSuccess': 'ok',
    'addFailure': 'fail',
    'addError': 'error',
    'addSkip': 'skip',
    'addExpectedFailure': 'xfail',
    'addUnexpectedSuccess': 'xpass',
}


def recording(hook, outcome):
    """The TextTestResult hook `hook`, then the test's outcome recorded."""
    def record_then(self, test, *args):
        getattr(unittest.TextTestResult, hook)(self, test, *args)
        self._record(test, outcome)
    return record_then


for _hook, _outcome in OUTCOME_OF_HOOK.items():
    setattr(OutcomeRecorder, _hook, recording(_hook, _outcome))


def flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from flatten(item)
        else:
            yield item


def main():
    ours = argparse.ArgumentParser(add_help=False)
    ours.add_argument('--tests-dir', required=True)
    ours.add_argument('--results', required=True)
    ours.add_argument('--only', action='append', default=[])
    args, rest = ours.parse_known_args()

    tests_dir = os.path.abspath(args.tests_dir)
    sys.path.insert(0, tests_dir)
    try:
        # rdma-core's run_tests.py, step by step: its argument parser keeps --dev/--port/--gid
        # for the tests' base classes and hands the rest to unittest.
        sys.argv[1:] = rest
        from args_parser import parser  # noqa: E402 (rdma-core's tests/args_parser.py)
        parser.parse_args()
        package = SourceFileLoader('tests', os.path.join(tests_dir, '__init__.py')).load_module()
        suite = unittest.defaultTestLoader.loadTestsFromModule(package)
    except Exception as ex:  # the suite itself is broken or pyverbs is missing
        print(f'rdma_core_tests: cannot load the tests in {tests_dir}: {ex!r}', file=sys.stderr)
        return 2

    if args.only:
        wanted = set(args.only)
        suite = unittest.TestSuite(t for t in flatten(suite) if t.id() in wanted)

    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=1, resultclass=OutcomeRecorder)
    result = runner.run(suite)
    with open(args.results, 'w', encoding='utf-8') as out:
        for test_id in sorted(result.outcomes):
            out.write(f'{result.outcomes[test_id]} {test_id}\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
