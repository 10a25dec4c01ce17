import { labelStep, niceMax, percentOf } from './chart';

describe('chart helpers', () => {
  it('labels every bucket when they fit, and every n-th when not', () => {
    expect(labelStep(7, 300)).toBe(1);
    expect(labelStep(24, 1000)).toBe(1);
    expect(labelStep(24, 280)).toBe(4);
    expect(labelStep(30, 280)).toBe(5);
    expect(labelStep(0, 280)).toBe(1);
  });

  it('rounds the axis top up to 1, 2 or 5 times a power of ten', () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(3)).toBe(5);
    expect(niceMax(10)).toBe(10);
    expect(niceMax(11)).toBe(20);
    expect(niceMax(14401)).toBe(20000);
    expect(niceMax(60000)).toBe(100000);
  });

  it('gives whole percentages', () => {
    expect(percentOf(1, 3)).toBe(33);
    expect(percentOf(0, 0)).toBe(0);
    expect(percentOf(2, 2)).toBe(100);
  });
});
