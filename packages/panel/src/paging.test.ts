import { currentCursor, listStateQuery, nextPage, previousPage, readListState, withFilters } from './paging';

const defaults = { status: '', q: '' };

describe('list state in the URL', () => {
  it('reads filters and the cursor stack, keeping defaults for what is absent', () => {
    const state = readListState(new URLSearchParams('status=PAID&page=a&page=b&other=x'), defaults);
    expect(state).toEqual({ filters: { status: 'PAID', q: '' }, cursors: ['a', 'b'] });
    expect(currentCursor(state.cursors)).toBe('b');
  });

  it('writes what differs from the defaults, and reads back the same state', () => {
    const state = { filters: { status: 'PAID', q: 'ana@example.com' }, cursors: ['c1', 'c+/=2'] };
    const query = listStateQuery(state, defaults);
    expect(query.toString()).toBe('status=PAID&q=ana%40example.com&page=c1&page=c%2B%2F%3D2');
    expect(readListState(new URLSearchParams(query.toString()), defaults)).toEqual(state);
    expect(listStateQuery({ filters: defaults, cursors: [] }, defaults).toString()).toBe('');
  });
});

describe('paging', () => {
  it('goes next then previous back to the first page', () => {
    let cursors: string[] = [];
    expect(currentCursor(cursors)).toBeUndefined();
    cursors = nextPage(cursors, 'p2');
    cursors = nextPage(cursors, 'p3');
    expect(currentCursor(cursors)).toBe('p3');
    cursors = previousPage(cursors);
    expect(currentCursor(cursors)).toBe('p2');
    cursors = previousPage(cursors);
    expect(cursors).toEqual([]);
    expect(previousPage(cursors)).toEqual([]);
  });

  it('starts again at page 1 when the filters change', () => {
    expect(withFilters({ filters: defaults, cursors: ['a'] }, { status: 'PAID', q: '' })).toEqual({
      filters: { status: 'PAID', q: '' },
      cursors: [],
    });
  });
});
