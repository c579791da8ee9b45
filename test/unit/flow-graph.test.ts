import { FlowCycleError, FlowLimitError, InvalidFlowError, UnknownFlowDependencyError } from '../../src/flow/errors';
import type { FlowNode } from '../../src/flow/flow-definition';
import { buildGraph } from '../../src/flow/flow-graph';
import { toFlowStatus } from '../../src/flow/flow-status';

const node = (name: string, dependsOn: string[] = [], extra: Partial<FlowNode> = {}): FlowNode => ({
  name,
  class: 'Job',
  args: [],
  dependsOn,
  ...extra,
});

function thrown(nodes: FlowNode[]): unknown {
  try {
    buildGraph({ nodes });
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

describe('flow graphs', () => {
  it('resolves names declared later, orders parents first, and measures depth and width', () => {
    const graph = buildGraph({
      nodes: [node('merge', ['a', 'b']), node('a', ['root']), node('b', ['root']), node('root')],
    });
    expect(graph.deps).toEqual([[1, 2], [3], [3], []]);
    expect(graph.dependents).toEqual([[], [0], [0], [1, 2]]);
    const position = (index: number) => graph.order.indexOf(index);
    expect(position(3)).toBeLessThan(position(1));
    expect(position(2)).toBeLessThan(position(0));
    expect([graph.depth, graph.width]).toEqual([3, 2]);
  });

  it('names the whole cycle, first node repeated last', () => {
    const error = thrown([node('a', ['c']), node('b', ['a']), node('c', ['b'])]);
    expect(error).toBeInstanceOf(FlowCycleError);
    expect(error).toMatchObject({ node: 'a', cycle: ['a', 'c', 'b', 'a'] });
    expect((error as Error).message).toContain('a -> c -> b -> a');
    expect(thrown([node('self', ['self'])])).toMatchObject({ cycle: ['self', 'self'] });
  });

  it('names the node and the unknown dependency', () => {
    const error = thrown([node('a'), node('b', ['a', 'missing'])]);
    expect(error).toBeInstanceOf(UnknownFlowDependencyError);
    expect(error).toMatchObject({ node: 'b', dependency: 'missing', field: 'dependsOn' });
  });

  it('refuses the caps: 1,000 nodes, depth 50, width 100', () => {
    const many = Array.from({ length: 1001 }, (_, n) => node(`n${n}`));
    expect(thrown(many)).toMatchObject({ limit: 'nodes', max: 1000 });
    const chain = Array.from({ length: 51 }, (_, n) => node(`n${n}`, n === 0 ? [] : [`n${n - 1}`]));
    expect(thrown(chain)).toBeInstanceOf(FlowLimitError);
    expect(thrown(chain)).toMatchObject({ limit: 'depth', max: 50 });
    expect(buildGraph({ nodes: chain.slice(0, 50) }).depth).toBe(50);
    const fan = [node('root'), ...Array.from({ length: 101 }, (_, n) => node(`leaf${n}`, ['root']))];
    expect(thrown(fan)).toMatchObject({ limit: 'width', max: 100, node: 'root' });
    expect(buildGraph({ nodes: fan.slice(0, 101) }).width).toBe(100);
  });

  it('refuses the malformed, each naming what is wrong', () => {
    expect(thrown([])).toMatchObject({ field: 'nodes' });
    expect(thrown([node('a'), node('a')])).toMatchObject({ node: 'a', field: 'name' });
    expect(thrown([node('')])).toMatchObject({ field: 'nodes[0].name' });
    expect(thrown([node('a', [], { onFailure: 'retry' as never })])).toMatchObject({ node: 'a', field: 'onFailure' });
    expect(thrown([node('a', [], { at: 1 })])).toMatchObject({ node: 'a', field: 'at' });
    expect(thrown([node('a', [], { bid: 'x' })])).toMatchObject({ node: 'a', field: 'bid' });
    expect(thrown([node('a'), node('b', ['a', 'a'])])).toMatchObject({ node: 'b', field: 'dependsOn' });
    expect(thrown([node('a')].map((n) => ({ ...n, dependsOn: 'a' as never })))).toBeInstanceOf(InvalidFlowError);
    expect(() => buildGraph({ nodes: [node('a')], callbackQueue: 'bad queue!' })).toThrow(InvalidFlowError);
  });
});

describe('flow status reading', () => {
  it('reads a Ruby-written header and nodes leniently', () => {
    const status = toFlowStatus(
      'fid1',
      { created_at: '1790000000.5', state: 'failed', total: '2', pending: '2', failed_at: 'garbled' },
      ['1', 'x'],
      [
        ['0', 'a', 'Job', 'default', 'j0', 'b0', 'succeeded', '[]', '[1]', '0', null, null, null],
        ['1', '', 'Job', 'default', 'j1', 'b1', 'dead', 'not json', '[]', '1', 'SENTINEL', 'boom', 'ignore'],
        [null, null, null, null, null, null, null, null, null, null, null, null, null],
      ],
    );
    expect(status).toMatchObject({ state: 'failed', total: 2, succeeded: 0, createdAt: 1790000000.5, failedAt: null });
    expect(status.deadNodes).toEqual([1]);
    expect(status.nodes).toHaveLength(2);
    expect(status.nodes[0]).toMatchObject({ name: 'a', dependents: [1], onFailure: 'fail', piped: false });
    expect(status.nodes[1]).toMatchObject({
      name: null,
      dependsOn: [],
      piped: true,
      error: 'boom',
      onFailure: 'ignore',
    });
  });
});
