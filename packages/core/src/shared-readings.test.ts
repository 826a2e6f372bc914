import { SharedReadings } from './shared-readings';

describe('SharedReadings', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000;
  });

  it('gives callers within the max age one reading, and reads again after it', async () => {
    let reads = 0;
    const readings = new SharedReadings<string, number>({ now });
    const read = async () => ++reads;
    expect(await Promise.all([readings.get('a', 500, read), readings.get('a', 500, read)])).toEqual([1, 1]);
    clock += 499;
    expect(await readings.get('a', 500, read)).toBe(1);
    clock += 1;
    expect(await readings.get('a', 500, read)).toBe(2);
    // a max age of 0 always reads
    expect(await readings.get('a', 0, read)).toBe(3);
  });

  it('reads afresh after forget (a write made by this process)', async () => {
    let reads = 0;
    const readings = new SharedReadings<string, number>({ now });
    const read = async () => ++reads;
    expect(await readings.get('a', 500, read)).toBe(1);
    readings.forget('a');
    expect(await readings.get('a', 500, read)).toBe(2);
  });

  it('drops a failed reading at once', async () => {
    const readings = new SharedReadings<string, number>({ now });
    await expect(readings.get('a', 500, async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await readings.get('a', 500, async () => 7)).toBe(7);
  });

  it('with maxEntries, makes room for a new key by dropping stale readings, or all of them when none is stale', async () => {
    let reads = 0;
    const readings = new SharedReadings<string, number>({ now, maxEntries: 2 });
    const read = async () => ++reads;
    await readings.get('a', 500, read);
    clock += 600;
    await readings.get('b', 500, read);
    // full: 'a' is stale and goes, 'b' stays
    expect(await readings.get('c', 500, read)).toBe(3);
    expect(await readings.get('b', 500, read)).toBe(2);
    // full of fresh readings: all go
    expect(await readings.get('d', 500, read)).toBe(4);
    expect(await readings.get('b', 500, read)).toBe(5);
  });
});
