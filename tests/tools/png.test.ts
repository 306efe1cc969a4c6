/**
 * The screenshot decoder (png.ts) against PNGs written here with every row filter of the specification (none,
 * sub, up, average, Paeth), in RGB and RGBA, from random pixels: it must give the pixels back exactly.
 */

import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodePng } from "./png.ts";

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  out.set(Buffer.from(type, "latin1"), 4);
  out.set(body, 8);
  view.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
  return out;
}

/** A PNG of `pixels` (width · height · channels bytes), row y filtered with filter y % 5. */
function encode(pixels: Uint8Array, width: number, height: number, channels: 3 | 4): Uint8Array {
  const stride = width * channels;
  const raw = new Uint8Array(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    const filter = y % 5;
    raw[y * (stride + 1)] = filter;
    for (let x = 0; x < stride; x++) {
      const at = (yy: number, xx: number) => (yy >= 0 && xx >= 0 ? pixels[yy * stride + xx]! : 0);
      const [a, b, c] = [at(y, x - channels), at(y - 1, x), at(y - 1, x - channels)];
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter]!;
      raw[y * (stride + 1) + 1 + x] = (pixels[y * stride + x]! - predictor) & 0xff;
    }
  }
  const header = new Uint8Array(13);
  new DataView(header.buffer).setUint32(0, width);
  new DataView(header.buffer).setUint32(4, height);
  header.set([8, channels === 4 ? 6 : 2, 0, 0, 0], 8);
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", zlib.deflateSync(raw)), chunk("IEND", new Uint8Array(0))];
  return new Uint8Array(Buffer.concat(parts));
}

describe("decodePng", () => {
  it.each([3, 4] as const)("gives back random %d-channel pixels through every row filter", (channels) => {
    const [width, height] = [13, 11];
    const pixels = Uint8Array.from({ length: width * height * channels }, () => Math.floor(Math.random() * 256));
    const image = decodePng(encode(pixels, width, height, channels));
    expect([image.width, image.height]).toEqual([width, height]);
    const expected = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) expected.set([...pixels.subarray(i * channels, i * channels + 3), channels === 4 ? pixels[i * 4 + 3]! : 255], i * 4);
    expect(image.data).toEqual(expected);
  });

  it("refuses what it does not decode", () => {
    expect(() => decodePng(new Uint8Array(16))).toThrow(/not a PNG/);
  });
});
