import * as prom from 'prom-client';
import { LabelValues, OTHER_LABEL } from '../../src/observability/metrics/label-values';
import { WurkMetrics } from '../../src/observability/metrics/wurk-metrics';

describe('metrics label values', () => {
  it('names only known values, at most cap of them, and reports the rest as other', () => {
    const labels = new LabelValues((value) => value.startsWith('Known'), 2);
    expect(labels.of('Known1')).toBe('Known1');
    expect(labels.of('Stranger')).toBe(OTHER_LABEL);
    expect(labels.of('Known2')).toBe('Known2');
    // Over the cap a known value is other too; an admitted one keeps its name.
    expect(labels.of('Known3')).toBe(OTHER_LABEL);
    expect(labels.of('Known1')).toBe('Known1');
  });

  it('a known value spelled other does not take a slot of its own', () => {
    const labels = new LabelValues(() => true, 1);
    expect(labels.of('other')).toBe(OTHER_LABEL);
    expect(labels.of('Real')).toBe('Real');
  });

  it('maxLabelValues must be a positive integer, named in the error', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(
        () =>
          new WurkMetrics(
            prom,
            { redis: {} as never, busy: () => 0 },
            { registry: new prom.Registry(), maxLabelValues: bad },
          ),
      ).toThrow('wurk option metrics.maxLabelValues must be a positive integer');
    }
  });
});
