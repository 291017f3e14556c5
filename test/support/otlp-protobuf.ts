/**
 * Reads an OTLP/HTTP protobuf trace export (`ExportTraceServiceRequest`,
 * opentelemetry/proto/collector/trace/v1) into the JSON shape of an http/json export, so the
 * test receiver keeps one path for both. Only the fields the tests read are kept: resource
 * attributes, and each span's ids, name and attributes. Wire format: protobuf's encoding guide
 * (varint, 64-bit, length-delimited and 32-bit fields).
 */

interface Field {
  number: number;
  /** Varints as bigint (int64 attributes), fixed-width fields as their raw bytes, length-delimited as their bytes. */
  value: bigint | Uint8Array;
}

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

function readVarint(buf: Uint8Array, at: { pos: number }): bigint {
  let result = 0n;
  for (let shift = 0n; ; shift += 7n) {
    if (at.pos >= buf.length) throw new Error('truncated varint');
    const byte = buf[at.pos++]!;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return result;
  }
}

function fieldsOf(buf: Uint8Array): Field[] {
  const fields: Field[] = [];
  const at = { pos: 0 };
  const take = (length: number) => {
    if (at.pos + length > buf.length) throw new Error('truncated field');
    const bytes = buf.subarray(at.pos, at.pos + length);
    at.pos += length;
    return bytes;
  };
  while (at.pos < buf.length) {
    const tag = Number(readVarint(buf, at));
    const number = tag >>> 3;
    const wireType = tag & 7;
    if (wireType === VARINT) fields.push({ number, value: readVarint(buf, at) });
    else if (wireType === FIXED64) fields.push({ number, value: take(8) });
    else if (wireType === LENGTH_DELIMITED) fields.push({ number, value: take(Number(readVarint(buf, at))) });
    else if (wireType === FIXED32) fields.push({ number, value: take(4) });
    else throw new Error(`unsupported wire type ${wireType} of field ${number}`);
  }
  return fields;
}

const bytesOf = (fields: Field[], number: number) => fields.filter((f) => f.number === number).map((f) => f.value as Uint8Array);
const firstBytes = (fields: Field[], number: number) => bytesOf(fields, number)[0];
const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8'));
const hex = (bytes: Uint8Array | undefined) => (bytes === undefined ? '' : Buffer.from(bytes).toString('hex'));

/** AnyValue: string 1, bool 2, int64 3, double 4 (arrays, key-value lists and bytes are not read). */
function anyValue(fields: Field[]): { stringValue?: string; boolValue?: boolean; intValue?: string; doubleValue?: number } {
  for (const field of fields) {
    if (field.number === 1) return { stringValue: text(field.value as Uint8Array)! };
    if (field.number === 2) return { boolValue: field.value !== 0n };
    if (field.number === 3) return { intValue: BigInt.asIntN(64, field.value as bigint).toString() };
    if (field.number === 4) return { doubleValue: Buffer.from(field.value as Uint8Array).readDoubleLE(0) };
  }
  return {};
}

/** KeyValue: key 1, value 2. */
const keyValues = (list: Uint8Array[]) =>
  list.map((bytes) => {
    const fields = fieldsOf(bytes);
    return { key: text(firstBytes(fields, 1)) ?? '', value: anyValue(fieldsOf(firstBytes(fields, 2) ?? new Uint8Array())) };
  });

/** ExportTraceServiceRequest → resource_spans 1 → (resource 1 → attributes 1; scope_spans 2 → spans 2). */
export function decodeTraceExport(body: Uint8Array) {
  return {
    resourceSpans: bytesOf(fieldsOf(body), 1).map((resourceSpansBytes) => {
      const resourceSpans = fieldsOf(resourceSpansBytes);
      const resource = fieldsOf(firstBytes(resourceSpans, 1) ?? new Uint8Array());
      return {
        resource: { attributes: keyValues(bytesOf(resource, 1)) },
        scopeSpans: bytesOf(resourceSpans, 2).map((scopeBytes) => ({
          // Span: trace_id 1, span_id 2, parent_span_id 4, name 5, attributes 9.
          spans: bytesOf(fieldsOf(scopeBytes), 2).map((spanBytes) => {
            const span = fieldsOf(spanBytes);
            return {
              traceId: hex(firstBytes(span, 1)),
              spanId: hex(firstBytes(span, 2)),
              parentSpanId: hex(firstBytes(span, 4)),
              name: text(firstBytes(span, 5)) ?? '',
              attributes: keyValues(bytesOf(span, 9)),
            };
          }),
        })),
      };
    }),
  };
}
