import {
  MAX_ANNOTATION_BYTES,
  MAX_JSON_CONTAINERS,
  MAX_JSON_DEPTH,
  parseIPPool,
  parseIPPools,
  parseNamespaceDefault,
} from '../../src/spiderpool/candidate-annotations.js';

describe('parseIPPools: ipam.spidernet.io/ippools as Spiderpool decodes and checks it', () => {
  test('interface on every item names each NIC', () => {
    expect(parseIPPools('[{"interface":"eth0","ipv4":["a"],"ipv6":["b"]},{"interface":"net1","ipv4":["c"]}]')).toEqual({
      ok: true,
      nics: [
        { nic: 'eth0', ipv4: ['a'], ipv6: ['b'] },
        { nic: 'net1', ipv4: ['c'], ipv6: [] },
      ],
    });
  });

  test('interface on no item: NICs "0", "1", … by position (validateAndMutateMultipleNICAnnotations)', () => {
    expect(parseIPPools('[{"ipv4":["a"]},{"ipv4":["b"],"cleangateway":true}]')).toEqual({
      ok: true,
      nics: [
        { nic: '0', ipv4: ['a'], ipv6: [] },
        { nic: '1', ipv4: ['b'], ipv6: [] },
      ],
    });
  });

  test('keys match without regard to ASCII case, unknown keys are ignored, null leaves zero values', () => {
    expect(parseIPPools('[{"Interface":"eth0","IPv4":["a",null],"IPV6":null,"ipv4pools":["x"],"defaultRoute":true}]')).toEqual({
      ok: true,
      nics: [{ nic: 'eth0', ipv4: ['a', ''], ipv6: [] }],
    });
  });

  test('an explicit empty interface counts as none', () => {
    expect(parseIPPools('[{"interface":"","ipv4":["a"]}]')).toEqual({ ok: true, nics: [{ nic: '0', ipv4: ['a'], ipv6: [] }] });
  });

  test.each([
    ['', /is empty/],
    ['not json', /is not valid JSON/],
    ['[', /is not valid JSON/],
    ['[]', /at least one item/],
    ['null', /at least one item/],
    ['{"interface":"eth0"}', /must be a JSON list .* not a JSON object/],
    ['"eth0"', /not a JSON string/],
    ['[1]', /item 0 must be a JSON object, not a JSON number/],
    ['[{"interface":1}]', /"interface" must be a string/],
    ['[{"ipv4":"a"}]', /"ipv4" must be a list of pool names, not a JSON string/],
    ['[{"ipv4":[1]}]', /"ipv4"\[0\] must be a pool name/],
    ['[{"cleangateway":"yes"}]', /"cleangateway" must be true or false/],
    ['[{"interface":"eth0"},{"ipv4":["a"]}]', /every item or on none/],
    ['[{"interface":"eth0"},{"interface":"eth0"}]', /names interface "eth0" twice/],
    ['[{"interface":"eth0"}] x', /is not valid JSON/],
  ])('%j is refused', (text, reason) => {
    const parsed = parseIPPools(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toMatch(reason);
  });

  test('a null item is an item with no interface', () => {
    expect(parseIPPools('[null,{"ipv4":["a"]}]')).toEqual({
      ok: true,
      nics: [
        { nic: '0', ipv4: [], ipv6: [] },
        { nic: '1', ipv4: ['a'], ipv6: [] },
      ],
    });
  });
});

describe('parseIPPool: ipam.spidernet.io/ippool', () => {
  test('both versions, for every NIC', () => {
    expect(parseIPPool('{"ipv4":["a"],"ipv6":["b"]}')).toEqual({ ok: true, nics: [{ nic: undefined, ipv4: ['a'], ipv6: ['b'] }] });
  });

  test("the old docs' keys (ipv4pools) are not read: no pools", () => {
    expect(parseIPPool('{"interface":"eth0","ipv4pools":["a"]}')).toEqual({ ok: true, nics: [{ nic: undefined, ipv4: [], ipv6: [] }] });
  });

  test('null names no pool', () => {
    expect(parseIPPool('null')).toEqual({ ok: true, nics: [{ nic: undefined, ipv4: [], ipv6: [] }] });
  });

  test.each([['["a"]'], ['{"ipv4":"a"}'], ['{"ipv6":[true]}'], ['{']])('%j is refused', (text) => {
    expect(parseIPPool(text).ok).toBe(false);
  });
});

describe('parseNamespaceDefault: ipam.spidernet.io/default-ipv4-ippool and -ipv6-', () => {
  test.each([
    ['["a","b"]', ['a', 'b']],
    ['[]', []],
    ['null', []],
  ])('%j names %j', (text, names) => {
    expect(parseNamespaceDefault(text)).toEqual({ ok: true, names });
  });

  test.each([['a'], ['"a"'], ['{"a":1}'], ['[1]']])('%j is refused', (text) => {
    expect(parseNamespaceDefault(text).ok).toBe(false);
  });
});

describe('values too large to read within a review are not parsed', () => {
  test.each([
    [
      'longer than the API server allows',
      JSON.stringify([{ ipv4: ['x'.repeat(MAX_ANNOTATION_BYTES)] }]),
      `the value is longer than ${MAX_ANNOTATION_BYTES} bytes, the API server's limit for all annotations of an object`,
    ],
    [
      'nested deeper than read',
      '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1),
      `the value nests JSON deeper than ${MAX_JSON_DEPTH} levels, more than this webhook reads`,
    ],
    [
      'more objects than read',
      JSON.stringify(Array.from({ length: MAX_JSON_CONTAINERS }, () => ({}))),
      `the value holds more than ${MAX_JSON_CONTAINERS} JSON objects and lists, more than this webhook reads`,
    ],
  ])('%s', (_what, text, reason) => {
    expect(parseIPPools(text)).toEqual({ ok: false, reason, unchecked: true });
  });

  test('brackets inside strings are not counted; the bounds themselves are read', () => {
    expect(parseIPPool(JSON.stringify({ ipv4: ['['.repeat(100), '{\\"'] }))).toEqual({
      ok: true,
      nics: [{ nic: undefined, ipv4: ['['.repeat(100), '{\\"'], ipv6: [] }],
    });
    // The list and 4 095 items: 4 096 objects and lists, read.
    const read = parseIPPools(JSON.stringify(Array.from({ length: MAX_JSON_CONTAINERS - 1 }, () => ({}))));
    expect(read.ok && read.nics.length).toBe(MAX_JSON_CONTAINERS - 1);
    expect(parseIPPools('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH))).toEqual({
      ok: false,
      reason: 'item 0 must be a JSON object, not a JSON array',
    });
  });
});
