// @platformatic/kafka (Node.js, pure JavaScript) in the compatibility
// suite: one scenario of compat/README.md per run, called by
// compat/clients/platformatic.sh as
//
//   node suite.mjs BOOTSTRAP ID SCENARIO [PHASE]
//
// Its record headers are a Map: the repeated header key of the data is sent
// once (the other headers as compat/README.md has them). Its consumer always
// belongs to a group: records are read back by a consumer of a group of its
// own. zstd needs Node.js 22.15 or later: on an older Node.js the produce
// scenario says so and checks the other codecs. Exit status 0 when everything read back is what the scenario expects.
import { Admin, Consumer, Producer, ConfigResourceTypes, ConfigSources,
    IncrementalAlterConfigOperationTypes, FetchIsolationLevels } from '@platformatic/kafka'

const [BS, ID, SCENARIO, PHASE] = process.argv.slice(2)
const N_PRODUCE = 50
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
const DEADLINE = 60000
const base = { clientId: 'strand-compat-platformatic', bootstrapBrokers: [BS] }
let errors = 0

function mismatch (msg) {
  if (++errors <= 20) console.error('MISMATCH: ' + msg)
}
function die (msg) {
  console.error('FAIL: ' + msg)
  process.exit(1)
}
const topic = what => `c-platformatic-${what}-${ID}`
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// The data of compat/README.md.
function key (i) {
  if (i % 10 === 0) return undefined
  if (i === 7) return Buffer.from([0, 0xff, 1, 0xfe, 0])
  return Buffer.from(`key-${i}`)
}
function value (i) {
  if (i === 5) return Buffer.alloc(0)
  const head = Buffer.from(`value-${i} ü✓|`)
  const tail = Buffer.alloc(i % 40)
  for (let j = 0; j < i % 40; j++) tail[j] = (i * 31 + j) & 0xff
  return Buffer.concat([head, tail])
}
function headers (i) {
  if (i % 3 === 1) return [['h', `v${i}`]]
  if (i % 3 === 2) return [['a', '2'], ['empty', '']]
  return []
}
const headerMap = i => new Map(headers(i).map(([k, v]) => [Buffer.from(k), Buffer.from(v)]))

async function withAdmin (fn) {
  const admin = new Admin(base)
  try { return await fn(admin) } finally { await admin.close() }
}
const create = (admin, name, partitions) => admin.createTopics({ topics: [name], partitions, replicas: 1 })

async function send (messages, opts = {}) {
  const p = new Producer({ ...base, ...opts })
  try { return await p.send({ messages }) } finally { await p.close() }
}

// Reads n records of topic t from the start, by a consumer of its own group.
async function readAll (t, n, opts = {}) {
  const c = new Consumer({ ...base, groupId: `${t}-reader`, ...opts })
  const out = []
  const stream = await c.consume({ topics: [t], mode: 'earliest', autocommit: false, maxWaitTime: 200, ...opts })
  const timer = setTimeout(() => stream.close(), DEADLINE)
  for await (const m of stream) {
    out.push(m)
    if (out.length >= n) break
  }
  clearTimeout(timer)
  await stream.close()
  await c.close(true)
  out.sort((a, b) => Number(a.offset - b.offset))
  if (out.length !== n) mismatch(`${t}: read ${out.length} records, expected ${n}`)
  return out
}

async function metadata () {
  const t = topic('meta')
  await withAdmin(async admin => {
    await create(admin, t, 3)
    try {
      await create(admin, t, 3)
      mismatch(`a second create of ${t} succeeded`)
    } catch (e) {
      if (!JSON.stringify(e.errors ?? e.message).includes('TOPIC_ALREADY_EXISTS') && !String(e).includes('already exists')) {
        mismatch(`second create: ${e}`)
      }
    }
    const md = await admin.metadata({ topics: [t] })
    const brokers = [...md.brokers.values()].map(b => `${b.host}:${b.port}`)
    if (brokers.length !== 1 || brokers[0] !== BS) mismatch(`brokers ${brokers}, expected [${BS}]`)
    const [nodeId] = md.brokers.keys()
    const tm = md.topics.get(t)
    if (!tm || tm.partitionsCount !== 3) die(`${t}: ${JSON.stringify(tm)}`)
    tm.partitions.forEach((p, i) => { if (p.leader !== nodeId) mismatch(`partition ${i} led by ${p.leader}`) })
    if (!(await admin.listTopics()).includes(t)) mismatch(`${t} not listed`)
  })
  console.log(`metadata: broker at ${BS}, ${t} created with 3 partitions led by it`)
}

function checkRecord (what, i, m, ts) {
  if (m.offset !== BigInt(i)) mismatch(`${what}: record ${i} at offset ${m.offset}`)
  const k = key(i)
  if (k === undefined ? (m.key && m.key.length) : !k.equals(m.key)) mismatch(`${what}: offset ${m.offset} key ${m.key}`)
  if (!value(i).equals(m.value)) mismatch(`${what}: offset ${m.offset} value ${m.value}`)
  if (m.timestamp !== ts) mismatch(`${what}: offset ${m.offset} timestamp ${m.timestamp}, expected ${ts}`)
  const hs = [...m.headers.entries()].map(([hk, hv]) => [hk.toString(), hv.toString()])
  if (JSON.stringify(hs) !== JSON.stringify(headers(i))) mismatch(`${what}: offset ${m.offset} headers ${JSON.stringify(hs)}`)
}

async function produce () {
  const ts0 = BigInt(Math.floor(Date.now() / 1000) * 1000 - 3600000)
  await withAdmin(async admin => { for (const c of CODECS) await create(admin, topic(`p-${c}`), 1) })
  for (const codec of CODECS) {
    const t = topic(`p-${codec}`)
    const msgs = []
    for (let i = 0; i < N_PRODUCE; i++) {
      msgs.push({ topic: t, partition: 0, key: key(i), value: value(i), headers: headerMap(i), timestamp: ts0 + BigInt(i) })
    }
    let r
    try {
      r = await send(msgs, { compression: codec, acks: -1 })
    } catch (e) {
      // zstd needs node:zlib's zstd (Node.js 22.15 and later).
      if (codec === 'zstd' && JSON.stringify(e.errors?.map(String) ?? []).includes('zstd is not supported')) {
        console.log(`produce zstd: not supported by this client on Node.js ${process.version}`)
        continue
      }
      throw e
    }
    if (!r.offsets || r.offsets[0].offset !== 0n) mismatch(`${codec}: produce result ${JSON.stringify(r, (k, v) => typeof v === 'bigint' ? String(v) : v)}`)
    const got = await readAll(t, N_PRODUCE)
    got.forEach((m, i) => checkRecord(codec, i, m, ts0 + BigInt(i)))
    console.log(`produce ${codec}: ${got.length} records read back exactly`)
  }
}

async function byTime () {
  const t = topic('time')
  const ts0 = BigInt(Math.floor(Date.now() / 1000) * 1000 - 60000)
  await withAdmin(async admin => {
    await create(admin, t, 1)
    const msgs = []
    for (let i = 0; i < 10; i++) msgs.push({ topic: t, partition: 0, value: Buffer.from(`t-${i}`), timestamp: ts0 + BigInt(i * 1000) })
    await send(msgs, { acks: -1 })
    const cases = [[ts0, 0n], [ts0 + 3500n, 4n], [ts0 + 9000n, 9n], [ts0 + 9001n, -1n], [-2n, 0n], [-1n, 10n]]
    for (const [ts, want] of cases) {
      const r = await admin.listOffsets({ topics: [{ name: t, partitions: [{ partitionIndex: 0, timestamp: ts }] }] })
      const off = r[0].partitions[0].offset
      if (off !== want) mismatch(`listOffsets(${ts}): ${off}, expected ${want}`)
    }
  })
  console.log('by-time: offsets 0, 4, 9, none for the 4 timestamps; earliest 0, latest 10')
}

function assigned (c) {
  return (c.assignments ?? []).flatMap(a => a.topic === topic('group') ? a.partitions : []).sort()
}

async function waitSpread (ms, what) {
  const end = Date.now() + DEADLINE
  let last
  while (Date.now() < end) {
    last = ms.map(m => assigned(m.c))
    const all = last.flat().sort()
    if (last.every(a => a.length > 0) && JSON.stringify(all) === '[0,1,2,3,4,5]') {
      console.log(`group: ${what}: ${JSON.stringify(last)}`)
      return
    }
    await sleep(50)
  }
  die(`${what}: assignments never covered the 6 partitions once each: ${JSON.stringify(last)}`)
}

async function group () {
  const t = topic('group')
  await withAdmin(admin => create(admin, t, 6))
  const msgs = []
  for (let i = 0; i < 60; i++) msgs.push({ topic: t, partition: i % 6, key: Buffer.from(`k${i}`), value: Buffer.from(`g-${i}`) })
  await send(msgs)
  const seen = new Map()
  const ms = []
  for (let i = 0; i < 3; i++) {
    const c = new Consumer({ ...base, clientId: `strand-compat-platformatic-${i}`, groupId: t, sessionTimeout: 10000, heartbeatInterval: 500 })
    const stream = await c.consume({ topics: [t], mode: 'earliest', autocommit: false, maxWaitTime: 200 })
    stream.on('data', m => seen.set(`${m.partition}/${m.offset}`, m.value.toString()))
    ms.push({ c, stream })
  }
  await waitSpread(ms, 'three members')
  const left = ms.pop()
  await left.stream.close()
  await left.c.close(true)
  await waitSpread(ms, 'two members after one left')
  const end = Date.now() + DEADLINE
  while (seen.size < 60 && Date.now() < end) await sleep(50)
  for (let i = 0; i < 60; i++) {
    const at = `${i % 6}/${Math.floor(i / 6)}`
    if (seen.get(at) !== `g-${i}`) mismatch(`partition/offset ${at}: ${seen.get(at)}, expected g-${i}`)
  }
  for (const m of ms) { await m.stream.close(); await m.c.close(true) }
  console.log('group: 3 members shared 6 partitions, 2 took them all after one left; 60 records read')
}

// Reads n records of t in group t from mode ('earliest' or 'committed');
// with commitLast, commits after the last one (its offset + 1).
async function readGroup (t, n, mode, commitLast) {
  const c = new Consumer({ ...base, groupId: t })
  const stream = await c.consume({ topics: [t], mode, fallbackMode: 'fail', autocommit: false, maxWaitTime: 200 })
  const got = []
  const timer = setTimeout(() => stream.close(), DEADLINE)
  for await (const m of stream) {
    got.push(`${m.offset}:${m.value}`)
    if (got.length === n) {
      if (commitLast) await m.commit()
      break
    }
  }
  clearTimeout(timer)
  await stream.close()
  await c.close(true)
  return got
}

async function restart () {
  const t = topic('restart')
  const rs = (a, b) => Array.from({ length: b - a }, (_, k) => ({ topic: t, partition: 0, value: Buffer.from(`r-${a + k}`) }))
  const want = (a, b) => JSON.stringify(Array.from({ length: b - a }, (_, k) => `${a + k}:r-${a + k}`))
  if (PHASE === 'before') {
    await withAdmin(admin => create(admin, t, 1))
    await send(rs(0, 20))
    const got = await readGroup(t, 10, 'earliest', true)
    if (JSON.stringify(got) !== want(0, 10)) mismatch(`first 10: ${got}`)
    console.log('restart: 10 of 20 records consumed, offset 10 committed')
    return
  }
  await send(rs(20, 25))
  await withAdmin(async admin => {
    const r = await admin.listConsumerGroupOffsets({ groups: [t] })
    const p = r[0].topics.find(x => x.name === t)?.partitions.find(x => x.partitionIndex === 0)
    if (!p || p.committedOffset !== 10n) mismatch(`committed after the restart: ${p && p.committedOffset}`)
  })
  const got = await readGroup(t, 15, 'committed', false)
  if (JSON.stringify(got) !== want(10, 25)) mismatch(`after the restart read ${got}`)
  console.log('restart: resumed at the committed offset 10, read 10..24')
}

async function idempotent () {
  const t = topic('idem')
  await withAdmin(admin => create(admin, t, 1))
  const p = new Producer({ ...base, idempotent: true, acks: -1 })
  // Ten sends of 100 records, one after the other. (Ten sends at once
  // left only the first 100 records in the log, against Kafka 4.4 as
  // against Strand, with no error: a matter of this client.)
  for (let b = 0; b < 10; b++) {
    const msgs = []
    for (let i = b * 100; i < (b + 1) * 100; i++) msgs.push({ topic: t, partition: 0, value: Buffer.from(`i-${i}`) })
    await p.send({ messages: msgs })
  }
  await p.close()
  const got = await readAll(t, 1000)
  got.forEach((m, i) => { if (m.offset !== BigInt(i) || m.value.toString() !== `i-${i}`) mismatch(`offset ${m.offset}: ${m.value}, expected i-${i}`) })
  console.log('idempotent: 1000 records once each, in order')
}

async function txn () {
  const t = topic('txn')
  await withAdmin(admin => create(admin, t, 1))
  const p = new Producer({ ...base, idempotent: true, transactionalId: t, acks: -1 })
  for (const [prefix, first, end] of [['t', 0, 'commit'], ['a', 0, 'abort'], ['t', 5, 'commit']]) {
    const tx = await p.beginTransaction()
    const msgs = []
    for (let i = first; i < first + 5; i++) msgs.push({ topic: t, partition: 0, value: Buffer.from(`${prefix}-${i}`) })
    await tx.send({ messages: msgs })
    if (end === 'commit') await tx.commit(); else await tx.abort()
  }
  await p.close()
  const got = (await readAll(t, 10, { isolationLevel: FetchIsolationLevels.READ_COMMITTED })).map(m => m.value.toString())
  const want = Array.from({ length: 10 }, (_, i) => `t-${i}`)
  if (JSON.stringify(got) !== JSON.stringify(want)) mismatch(`read_committed read ${got}`)
  console.log('txn: read_committed read the 10 committed records, not the aborted 5')
}

async function describe (admin, t, source) {
  const r = await admin.describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: t, configurationKeys: ['retention.ms'] }] })
  const e = r[0].configs.find(x => x.name === 'retention.ms')
  if (!e) { mismatch('retention.ms not described'); return null }
  if (e.configSource !== source) mismatch(`retention.ms=${e.value} has source ${e.configSource}, expected ${source}`)
  return e.value
}

async function configs () {
  const t = topic('configs')
  await withAdmin(async admin => {
    await create(admin, t, 1)
    let v = await describe(admin, t, ConfigSources.DEFAULT_CONFIG)
    if (v !== '604800000') mismatch(`retention.ms is ${v}`)
    const alter = config => admin.incrementalAlterConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: t, configs: [config] }] })
    await alter({ name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.SET, value: '123456789' })
    v = await describe(admin, t, ConfigSources.TOPIC_CONFIG)
    if (v !== '123456789') mismatch(`retention.ms after SET is ${v}`)
    await alter({ name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.DELETE })
    v = await describe(admin, t, ConfigSources.DEFAULT_CONFIG)
    if (v !== '604800000') mismatch(`retention.ms after DELETE is ${v}`)
  })
  console.log('configs: retention.ms 604800000 (default), SET 123456789 (dynamic), DELETE back to default')
}

const scenarios = { metadata, produce, 'by-time': byTime, group, restart, idempotent, txn, configs }
if (!scenarios[SCENARIO]) die(`unknown scenario ${SCENARIO}`)
try {
  await scenarios[SCENARIO]()
} catch (e) {
  die(`${SCENARIO}: ${e.stack ?? e}${e.errors ? ' ' + JSON.stringify(e.errors.map(x => String(x))) : ''}`)
}
if (errors) die(`${errors} mismatches`)
process.exit(0)
