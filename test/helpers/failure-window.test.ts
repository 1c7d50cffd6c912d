import { failureWindow } from './failure-window.js';

describe('failureWindow', () => {
  it('is all zero without a failure in the fault', () => {
    expect(failureWindow([1, 2, 30], 10, 20)).toEqual({ failed: 0, recoverySeconds: 0, longestStretchSeconds: 0 });
  });

  it('counts only the failures sent during the fault, recovery from its start', () => {
    expect(failureWindow([5, 10.5, 11, 12.5, 20], 10, 20)).toEqual({ failed: 3, recoverySeconds: 2.5, longestStretchSeconds: 2 });
  });

  it('keeps a stretch across gaps of up to gapSeconds and splits it at a longer one', () => {
    const failed = [10, 11.5, 13, 14.5, 20, 20.5];
    expect(failureWindow(failed, 10, 30)).toEqual({ failed: 6, recoverySeconds: 10.5, longestStretchSeconds: 4.5 });
    expect(failureWindow(failed, 10, 30, 1)).toEqual({ failed: 6, recoverySeconds: 10.5, longestStretchSeconds: 0.5 });
  });
});
