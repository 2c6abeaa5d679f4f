import { Counter, Gauge, type Registry } from 'prom-client';

/** How the process's text-parser counts are read (`textParserStats`, `takeLargestParsed` of @sps/core). */
export interface TTextParserSource {
  stats(): { calls: number; squaredUnits: number };
  /** The longest text since the previous call. */
  takeLargest(): number;
}

/**
 * The text parser's work as Prometheus series, read at scrape time: `text_parser_calls_total`,
 * `text_parser_work_units_total` (length² of the texts, what twitter-text's cost grows with) and
 * `text_parser_largest_input_units` (the longest text since the previous scrape).
 */
export function registerTextParserMetrics(registry: Registry, source: TTextParserSource): void {
  new Counter({
    name: 'text_parser_calls_total',
    help: 'Texts handed to twitter-text (link search) in this process',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(source.stats().calls);
    },
  });
  new Counter({
    name: 'text_parser_work_units_total',
    help: 'Sum of the squared lengths (UTF-16 units) of the texts handed to twitter-text, which its cost grows with',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(source.stats().squaredUnits);
    },
  });
  new Gauge({
    name: 'text_parser_largest_input_units',
    help: 'The longest text (UTF-16 units) handed to twitter-text since the previous scrape',
    registers: [registry],
    collect() {
      this.set(source.takeLargest());
    },
  });
}
