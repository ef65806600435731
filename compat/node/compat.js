// KafkaJS compat check: the stock KafkaJS client (pinned in
// compat/node/package.json) against the broker given as the only argument.
// Run by compat/kafkajs.sh.
//
// For each compression codec (none and gzip built in; snappy through the
// kafkajs-snappy codec; lz4 and zstd through codecs registered here on the
// pure-JavaScript lz4js and zstd-codec, since KafkaJS ships none and the
// usual kafkajs-lz4 / @kafkajs/zstd need native builds) it auto-creates a
// new topic through a Metadata request, produces N records with the
// idempotent producer to explicit partitions, with keys, values, headers and
// explicit timestamps, reads them back (from the start, and from the middle
// of each partition) and compares every byte, offset and timestamp, then
// checks ListOffsets (admin.fetchTopicOffsets and
// fetchTopicOffsetsByTimestamp).
//
// KafkaJS has no public group-less consumer. The topic creation and the
// read-back use its lower-level Cluster and Broker objects (the ones its
// producer and consumer run on: the same Metadata and Fetch v11 requests
// and record batch decoder), reached through the client's private cluster
// factory; the pinned version keeps that stable. Exit status 0 when
// everything matches, 1 with the first differences on stderr.
'use strict'

const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = require('kafkajs')
const SnappyCodec = require('kafkajs-snappy')
const lz4 = require('lz4js')
const xxh32 = require('lz4js/xxh32.js').hash
const { ZstdCodec } = require('zstd-codec')

const N_RECORDS = 2000
const CHUNK = 100 // records per producer.send(): many batches per partition

let errors = 0
function mismatch(msg) {
  errors++
  if (errors <= 20) console.error('MISMATCH: ' + msg)
}
function die(msg) {
  console.error('FAIL: ' + msg)
  process.exit(1)
}

// n deterministic bytes covering all byte values, different per seed (the
// same xorshift as compat/go/main.go).
function detBytes(seed, n) {
  let x = (Math.imul(seed, 2654435761) + 1) >>> 0
  const b = Buffer.alloc(n)
  for (let i = 0; i < n; i++) {
    x = (x ^ (x << 13)) >>> 0
    x = (x ^ (x >>> 17)) >>> 0
    x = (x ^ (x << 5)) >>> 0
    b[i] = x & 0xff
  }
  return b
}

// Null, empty and binary keys and values, UTF-8, one large value, zero to
// three headers (an empty value, a repeated key; no null value: KafkaJS's
// record encoder cannot size one), timestamps increasing by 1 ms from base,
// partitions round-robin.
function makeRecords(nparts, base) {
  const ws = []
  for (let i = 0; i < N_RECORDS; i++) {
    const w = { i, part: i % nparts, ts: base + i, offset: -1 }
    if (i % 97 === 0) w.key = null
    else if (i % 89 === 0) w.key = Buffer.alloc(0)
    else if (i % 11 === 0) w.key = detBytes(i, 16)
    else w.key = Buffer.from('key-' + i)
    if (i === N_RECORDS / 2) w.value = detBytes(i, 200000)
    else if (i % 101 === 5) w.value = null
    else if (i % 50 === 0) w.value = Buffer.alloc(0)
    else if (i % 7 === 0) w.value = detBytes(i, 1 + (i % 300))
    else w.value = Buffer.from(`value ${i} of the kafkajs compat test: ünïcödé ✓`)
    w.headers = [
      [],
      [['h1', Buffer.from('v' + i)]],
      [['empty', Buffer.alloc(0)], ['bin', detBytes(i + 1, 8)]],
      [['dup', Buffer.from('a')], ['dup', Buffer.from('b')], ['ключ', Buffer.from('значение')]],
    ][i % 4]
    ws.push(w)
  }
  return ws
}

// KafkaJS headers are an object; a repeated key holds an array of values.
function headerObject(list) {
  const h = {}
  for (const [k, v] of list) {
    if (h[k] === undefined) h[k] = v
    else if (Array.isArray(h[k])) h[k].push(v)
    else h[k] = [h[k], v]
  }
  return h
}

// An LZ4 frame as Kafka reads it: 64 KB blocks, each compressed on its own
// with the block-independence flag set. (lz4js.compress() writes frames
// without that flag, which Kafka rejects: "Dependent block stream is
// unsupported".)
function lz4Frame(src) {
  const BLOCK = 65536
  const header = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0]) // magic, FLG v1 + B.Indep, BD 64 KB
  header[6] = (xxh32(0, header, 4, 2) >>> 8) & 0xff
  const out = [header]
  for (let s = 0; s < src.length; s += BLOCK) {
    const n = Math.min(BLOCK, src.length - s)
    const dst = Buffer.alloc(lz4.compressBound(n))
    const len = lz4.compressBlock(src, dst, s, n, new Uint32Array(1 << 16))
    const size = Buffer.alloc(4)
    if (len === 0 || len >= n) {
      size.writeUInt32LE((0x80000000 | n) >>> 0) // stored uncompressed
      out.push(size, src.subarray(s, s + n))
    } else {
      size.writeUInt32LE(len)
      out.push(size, dst.subarray(0, len))
    }
  }
  out.push(Buffer.alloc(4)) // end mark
  return Buffer.concat(out)
}

function lz4Codec() {
  return {
    async compress(encoder) {
      return lz4Frame(encoder.buffer)
    },
    async decompress(buffer) {
      return Buffer.from(lz4.decompress(buffer))
    },
  }
}

async function registerCodecs() {
  CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec
  CompressionCodecs[CompressionTypes.LZ4] = lz4Codec
  const zstd = await new Promise(resolve => ZstdCodec.run(resolve))
  const simple = new zstd.Simple()
  const streaming = new zstd.Streaming()
  CompressionCodecs[CompressionTypes.ZSTD] = () => ({
    async compress(encoder) {
      return Buffer.from(simple.compress(encoder.buffer, 3))
    },
    async decompress(buffer) {
      return Buffer.from(streaming.decompress(buffer))
    },
  })
}

async function checkBrokers(admin, bs) {
  const md = await admin.describeCluster()
  if (md.brokers.length !== 1) die(`Metadata lists ${md.brokers.length} brokers, expected 1`)
  const b = md.brokers[0]
  const addr = `${b.host}:${b.port}`
  if (addr !== bs) die(`Metadata: broker ${b.nodeId} at ${addr}, expected ${bs}`)
  const version = require('kafkajs/package.json').version
  console.log(`Metadata: broker ${b.nodeId} at ${addr}, controller ${md.controller},` +
    ` cluster ${md.clusterId} (kafkajs ${version})`)
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// A Metadata request for the new topic with auto-creation allowed, again
// until every partition has a leader; returns the partition count.
async function autoCreate(cluster, topic) {
  let last = ''
  for (let t = 0; t < 50; t++) {
    try {
      if (t === 0) await cluster.addTargetTopic(topic)
      else await cluster.refreshMetadata()
      const parts = cluster.findTopicPartitionMetadata(topic)
      last = JSON.stringify(parts)
      if (parts.length > 0 && parts.every(p => p.partitionErrorCode === 0 && p.leader >= 0)) {
        return parts.length
      }
    } catch (e) {
      last = `${e.name}: ${e.message}`
    }
    await sleep(100)
  }
  die(`topic ${topic} not auto-created with leaders: last answer ${last}`)
}

async function produce(producer, topic, compression, ws) {
  for (let c = 0; c < ws.length; c += CHUNK) {
    const chunk = ws.slice(c, c + CHUNK)
    let res
    try {
      res = await producer.send({
        topic,
        acks: -1,
        compression,
        messages: chunk.map(w => ({
          partition: w.part,
          key: w.key,
          value: w.value,
          headers: headerObject(w.headers),
          timestamp: String(w.ts),
        })),
      })
    } catch (e) {
      die(`produce to ${topic} (records ${c}..${c + chunk.length - 1}): ${e.name}: ${e.message}`)
    }
    // One result per partition: the base offset of the records sent there.
    const next = {}
    for (const r of res) {
      if (r.errorCode !== 0) mismatch(`produce to ${topic}[${r.partition}]: error ${r.errorCode}`)
      next[r.partition] = Number(r.baseOffset)
    }
    for (const w of chunk) {
      if (next[w.part] === undefined) {
        mismatch(`produce to ${topic}: no result for partition ${w.part}`)
        continue
      }
      w.offset = next[w.part]++
    }
  }
  const expect = {}
  for (const w of ws) {
    const e = expect[w.part] || 0
    if (w.offset !== e) {
      mismatch(`record ${w.i}: produce result offset ${w.offset} in partition ${w.part}, expected ${e}`)
    }
    expect[w.part] = e + 1
  }
}

function sameBytes(a, b) {
  if (a === null || b === null) return a === b
  return Buffer.compare(a, b) === 0
}

function compare(topic, partition, w, m) {
  const at = `${topic}[${partition}]@${m.offset}`
  if (Number(m.offset) !== w.offset) mismatch(`${at}: offset ${m.offset}, expected ${w.offset}`)
  const hex = b => (b === null ? 'null' : b.toString('hex'))
  if (!sameBytes(m.key, w.key)) mismatch(`${at}: key ${hex(m.key)}, expected ${hex(w.key)}`)
  if (!sameBytes(m.value, w.value)) {
    const len = b => (b === null ? 'null' : b.length)
    mismatch(`${at}: value of ${len(m.value)} bytes differs from the ${len(w.value)} produced`)
  }
  if (m.timestamp !== String(w.ts)) mismatch(`${at}: timestamp ${m.timestamp}, expected ${w.ts}`)
  if (m.isControlRecord) mismatch(`${at}: a control record`)
  const pid = m.batchContext && m.batchContext.producerId
  if (!(Number(pid) >= 0)) mismatch(`${at}: read back with producer id ${pid}: not from the idempotent producer`)
  const want = headerObject(w.headers)
  const got = m.headers || {}
  const show = h =>
    JSON.stringify(h, (k, v) => (v && v.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v))
  if (show(got) !== show(want)) mismatch(`${at}: headers ${show(got)}, expected ${show(want)}`)
  let n = (m.key ? m.key.length : 0) + (m.value ? m.value.length : 0)
  for (const [k, v] of w.headers) n += Buffer.byteLength(k) + v.length
  return n
}

// One Fetch (v11, KafkaJS's Broker.fetch) per partition leader for the
// given partitions at the given offsets; calls onRecord(partition, message)
// for each record at or past its partition's offset (a fetch answers whole
// batches, so the first one may start earlier).
async function fetchOnce(cluster, topic, offsets, onRecord) {
  const leaders = cluster.findLeaderForPartitions(topic, Object.keys(offsets))
  for (const nodeId of Object.keys(leaders)) {
    const broker = await cluster.findBroker({ nodeId })
    const partitions = leaders[nodeId].map(p => ({
      partition: p,
      fetchOffset: String(offsets[p]),
      maxBytes: 1048576,
    }))
    const resp = await broker.fetch({
      replicaId: -1,
      isolationLevel: 0,
      maxWaitTime: 500,
      minBytes: 1,
      maxBytes: 10485760,
      topics: [{ topic, partitions }],
    })
    for (const t of resp.responses) {
      for (const pd of t.partitions) {
        const from = offsets[pd.partition]
        if (pd.errorCode !== 0) die(`Fetch ${topic}[${pd.partition}] at ${from}: error ${pd.errorCode}`)
        for (const m of pd.messages) {
          if (Number(m.offset) >= from) onRecord(pd.partition, m)
        }
      }
    }
  }
}

// Reads every partition from offset 0 until each has as many records as
// produced, comparing them in order.
async function consume(cluster, topic, nparts, ws) {
  const byPart = {}
  for (const w of ws) (byPart[w.part] = byPart[w.part] || []).push(w)
  const next = {} // partition -> index of the next expected record
  for (let p = 0; p < nparts; p++) next[p] = 0
  let total = 0
  let nbytes = 0
  const deadline = Date.now() + 20000
  while (total < ws.length) {
    if (Date.now() > deadline) {
      die(`consume ${topic}: only ${total} of ${ws.length} records after 20 s (${JSON.stringify(next)})`)
    }
    const offsets = {}
    for (let p = 0; p < nparts; p++) {
      if (next[p] < byPart[p].length) offsets[p] = next[p] === 0 ? 0 : byPart[p][next[p] - 1].offset + 1
    }
    await fetchOnce(cluster, topic, offsets, (p, m) => {
      if (next[p] >= byPart[p].length) {
        mismatch(`${topic}[${p}]: extra record at offset ${m.offset}`)
        return
      }
      nbytes += compare(topic, p, byPart[p][next[p]++], m)
      total++
    })
  }
  return [total, nbytes]
}

// A fetch from the middle of each partition (inside a batch) starts with
// the record at that offset.
async function consumeFromMiddle(cluster, topic, nparts, ws) {
  const byPart = {}
  for (const w of ws) (byPart[w.part] = byPart[w.part] || []).push(w)
  const offsets = {}
  for (let p = 0; p < nparts; p++) offsets[p] = byPart[p][(byPart[p].length >> 1) + 1].offset
  const seen = {}
  await fetchOnce(cluster, topic, offsets, (p, m) => {
    if (seen[p]) return
    seen[p] = true
    compare(topic, p, byPart[p][(byPart[p].length >> 1) + 1], m)
  })
  for (let p = 0; p < nparts; p++) {
    if (!seen[p]) mismatch(`Fetch ${topic}[${p}] at ${offsets[p]} (mid-partition): no record`)
  }
}

// Earliest is 0 and latest the record count (fetchTopicOffsets); by
// timestamp, each partition's first record at or after it
// (fetchTopicOffsetsByTimestamp, which answers the latest offset where the
// broker finds none).
async function checkListOffsets(admin, topic, nparts, ws) {
  const byPart = {}
  for (const w of ws) (byPart[w.part] = byPart[w.part] || []).push(w)
  const offs = await admin.fetchTopicOffsets(topic)
  if (offs.length !== nparts) {
    mismatch(`fetchTopicOffsets ${topic}: ${offs.length} partitions, expected ${nparts}`)
  }
  for (const o of offs) {
    if (o.low !== '0') mismatch(`ListOffsets earliest ${topic}[${o.partition}]: ${o.low}, expected 0`)
    if (o.high !== String(byPart[o.partition].length)) {
      mismatch(`ListOffsets latest ${topic}[${o.partition}]: ${o.high}, expected ${byPart[o.partition].length}`)
    }
  }
  const mid = ws[ws.length / 2].ts
  const checks = [
    ['by-timestamp', mid],
    ['by-timestamp-between', mid - 1],
    ['by-timestamp-past-end', ws[ws.length - 1].ts + 1],
  ]
  for (const [name, ts] of checks) {
    const res = await admin.fetchTopicOffsetsByTimestamp(topic, ts)
    for (const r of res) {
      const first = byPart[r.partition].find(w => w.ts >= ts)
      const exp = first ? first.offset : byPart[r.partition].length
      if (r.offset !== String(exp)) {
        mismatch(`ListOffsets ${name} ${topic}[${r.partition}] (timestamp ${ts}): ${r.offset}, expected ${exp}`)
      }
    }
  }
}

async function main() {
  if (process.argv.length !== 3) die('usage: compat.js HOST:PORT')
  const bs = process.argv[2]
  await registerCodecs()
  const kafka = new Kafka({
    clientId: 'strand-compat-kafkajs',
    brokers: [bs],
    logLevel: logLevel.ERROR,
    retry: { retries: 5 },
  })
  const admin = kafka.admin()
  await admin.connect()
  await checkBrokers(admin, bs)
  const createCluster = Object.getOwnPropertySymbols(kafka).find(
    s => s.description === 'private:Kafka:createCluster'
  )
  if (!createCluster) die('kafkajs has no private cluster factory (not the pinned version?)')
  const cluster = kafka[createCluster]({ allowAutoTopicCreation: true })
  await cluster.connect()
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true })
  await producer.connect()

  const codecs = [
    ['none', CompressionTypes.None],
    ['gzip', CompressionTypes.GZIP],
    ['snappy', CompressionTypes.Snappy],
    ['lz4', CompressionTypes.LZ4],
    ['zstd', CompressionTypes.ZSTD],
  ]
  const run = `${process.pid}-${Date.now() % 1000000}`
  let nerr = 0
  for (const [name, compression] of codecs) {
    const start = Date.now()
    const topic = `compat-kafkajs-${name}-${run}`
    const nparts = await autoCreate(cluster, topic)
    // Ten minutes ago: inside retention and the timestamp bounds.
    const ws = makeRecords(nparts, Date.now() - 600000)
    await produce(producer, topic, compression, ws)
    const [n, nbytes] = await consume(cluster, topic, nparts, ws)
    await consumeFromMiddle(cluster, topic, nparts, ws)
    await checkListOffsets(admin, topic, nparts, ws)
    if (n !== ws.length) mismatch(`${name}: ${n} records compared, ${ws.length} produced`)
    if (errors > nerr) {
      console.log(`${name.padEnd(6)}: ${errors - nerr} differences (first ones on stderr)`)
      nerr = errors
      continue
    }
    const secs = ((Date.now() - start) / 1000).toFixed(2)
    console.log(`${name.padEnd(6)}: ${n} records (${nbytes} bytes) to ${topic} (${nparts} partitions,` +
      ` auto-created) produced idempotently, read back byte for byte, ListOffsets ok (${secs}s)`)
  }
  await producer.disconnect()
  await cluster.disconnect()
  await admin.disconnect()
  if (errors) die(`${errors} differences`)
}

const watchdog = setTimeout(() => die('not done after 100 s'), 100000)
main().then(
  () => {
    clearTimeout(watchdog)
    process.exit(0)
  },
  e => die(`${e.name}: ${e.message}\n${e.stack}`)
)
