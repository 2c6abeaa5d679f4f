// Prints one plain closing line ("jest: N passed, N failed, N skipped") that CI can read, and before it the
// slowest tests: a test that nears its time limit on a loaded CI box shows here before it fails there.
const SLOWEST = 12;

export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, numRuntimeErrorTestSuites } =
      results;
    const tests = results.testResults.flatMap((file) =>
      file.testResults
        .filter((t) => typeof t.duration === 'number')
        .map((t) => ({ path: file.testFilePath, name: t.fullName, duration: t.duration })),
    );
    tests.sort((a, b) => b.duration - a.duration);
    if (tests.length > 0) {
      const cwd = `${process.cwd()}/`;
      const lines = tests
        .slice(0, SLOWEST)
        .map(
          (t) => `${(t.duration / 1000).toFixed(1).padStart(6)} s  ${t.path.replace(cwd, '')} › ${t.name}`,
        );
      process.stdout.write(`\nslowest tests:\n${lines.join('\n')}\n`);
    }
    const failed = numFailedTests + numRuntimeErrorTestSuites;
    process.stdout.write(
      `\njest: ${numPassedTests} passed, ${failed} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
