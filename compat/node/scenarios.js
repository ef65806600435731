// The scenarios of compat/README.md that KafkaJS runs one per call (the
// others are compat.js's one run), called by compat/clients/kafkajs.sh:
//
//   scenarios.js BOOTSTRAP ID group|restart|txn|configs [PHASE]
//
// KafkaJS has no IncrementalAlterConfigs: the configs scenario sets
// retention.ms with admin.alterConfigs (AlterConfigs, which replaces the
// topic's whole set of dynamic keys) and gives the default back with an
// AlterConfigs of no keys, the same outcome as the incremental SET and
// DELETE. Its transactional consumer is the consumer group with
// readUncommitted false (KafkaJS's default). Exit status 0 when everything
// read back matches, 1 with the first differences on stderr.
'use strict'

const { Kafka, ConfigResourceTypes, Partitioners, logLevel } = require('kafkajs')

const DEADLINE = 60000
const [BS, RUN_ID, SCENARIO, PHASE = ''] = process.argv.slice(2)
// ConfigSource of DescribeConfigs v1+.
const DYNAMIC_TOPIC_CONFIG = 1
const DEFAULT_CONFIG = 5

let errors = 0
function mismatch(msg) {
  errors++
  if (errors <= 20) console.error('MISMATCH: ' + msg)
}
function die(msg) {
  console.error('FAIL: ' + msg)
  process.exit(1)
}
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
const T = `c-kafkajs-${SCENARIO}-${RUN_ID}`
const kafka = new Kafka({ clientId: 'strand-compat-kafkajs', brokers: [BS], logLevel: logLevel.ERROR,
  retry: { retries: 8 } })

async function withAdmin(fn) {
  const a = kafka.admin()
  await a.connect()
  try {
    return await fn(a)
  } finally {
    await a.disconnect()
  }
}

// Sends [partition, key, value] in order, each send acknowledged by all.
async function sendAll(records) {
  const p = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await p.connect()
  for (const [partition, key, value] of records) {
    await p.send({ topic: T, acks: -1, messages: [{ partition, key, value }] })
  }
  await p.disconnect()
}

// A member of group T from the start of the topic; onMessage(partition,
// offset, value) for every record. owned() is its current assignment.
async function member(onMessage, conf = {}) {
  const c = kafka.consumer({ groupId: T, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 500,
    ...conf })
  let owned = []
  c.on(c.events.GROUP_JOIN, e => { owned = (e.payload.memberAssignment[T] || []).slice().sort() })
  await c.connect()
  await c.subscribe({ topic: T, fromBeginning: true })
  await c.run({ autoCommit: false, eachMessage: async ({ partition, message }) =>
    onMessage(partition, Number(message.offset), message.value.toString()) })
  return { c, owned: () => owned }
}

async function waitSpread(ms, what) {
  let last
  for (const end = Date.now() + DEADLINE; Date.now() < end; await sleep(50)) {
    last = ms.map(m => m.owned())
    const all = last.flat().sort()
    if (last.every(o => o.length > 0) && all.join() === '0,1,2,3,4,5') {
      console.log(`group: ${what}: ${JSON.stringify(last)}`)
      return
    }
  }
  die(`${what}: the members never owned the 6 partitions once each: ${JSON.stringify(last)}`)
}

async function group() {
  const recs = []
  for (let i = 0; i < 60; i++) recs.push([i % 6, `k${i}`, `g-${i}`])
  await sendAll(recs)
  const seen = new Map()
  const note = (p, o, v) => { seen.set(`${p}/${o}`, v) }
  const ms = [await member(note), await member(note), await member(note)]
  await waitSpread(ms, 'three members')
  await ms.pop().c.disconnect() // leaves the group
  await waitSpread(ms, 'two members after one left')
  for (const end = Date.now() + DEADLINE; seen.size < 60 && Date.now() < end;) await sleep(50)
  for (let i = 0; i < 60; i++) {
    const at = `${i % 6}/${Math.floor(i / 6)}`
    if (seen.get(at) !== `g-${i}`) mismatch(`partition/offset ${at}: ${seen.get(at)}, expected g-${i}`)
  }
  for (const m of ms) await m.c.disconnect()
  console.log('group: 3 members shared 6 partitions, 2 took them all after one left; 60 records read')
}

// A member of group T reads n records from where the group stands; commits
// offset commitAt (with metadata meta) when given. Returns [offset, value].
async function readGroup(n, commitAt, meta) {
  const got = []
  let done
  const finished = new Promise(resolve => { done = resolve })
  const m = await member((p, o, v) => {
    if (got.length < n) got.push([o, v])
    if (got.length === n) done()
  })
  const timer = setTimeout(done, DEADLINE)
  await finished
  clearTimeout(timer)
  if (commitAt !== undefined) {
    await m.c.commitOffsets([{ topic: T, partition: 0, offset: String(commitAt), metadata: meta }])
  }
  await m.c.disconnect()
  return got
}

function expectRange(what, got, first, n) {
  const want = []
  for (let i = first; i < first + n; i++) want.push([i, `r-${i}`])
  if (JSON.stringify(got) !== JSON.stringify(want)) mismatch(`${what}: ${JSON.stringify(got)}`)
}

async function restart() {
  const meta = 'kafkajs-' + RUN_ID
  const recs = []
  if (PHASE === 'before') {
    for (let i = 0; i < 20; i++) recs.push([0, null, `r-${i}`])
    await sendAll(recs)
    expectRange('the first 10 records read', await readGroup(10, 10, meta), 0, 10)
    console.log(`restart: 10 of 20 records consumed, offset 10 committed with metadata ${meta}`)
    return
  }
  for (let i = 20; i < 25; i++) recs.push([0, null, `r-${i}`])
  await sendAll(recs)
  const offs = await withAdmin(a => a.fetchOffsets({ groupId: T, topics: [T] }))
  const p = offs.length === 1 && offs[0].partitions.find(q => q.partition === 0)
  if (!p || p.offset !== '10' || p.metadata !== meta) {
    mismatch(`committed after the restart: ${JSON.stringify(offs)}, expected offset 10 metadata ${meta}`)
  }
  expectRange('after the restart', await readGroup(15), 10, 15)
  console.log('restart: resumed at the committed offset 10, read 10..24')
}

async function txn() {
  const p = kafka.producer({ transactionalId: T, idempotent: true, maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner })
  await p.connect()
  for (const [prefix, first, commit] of [['t', 0, true], ['a', 0, false], ['t', 5, true]]) {
    const tx = await p.transaction()
    for (let i = first; i < first + 5; i++) {
      await tx.send({ topic: T, acks: -1, messages: [{ partition: 0, value: `${prefix}-${i}` }] })
    }
    if (commit) await tx.commit()
    else await tx.abort()
  }
  await p.disconnect()
  const got = []
  const m = await member((part, o, v) => { got.push(v) }, { readUncommitted: false })
  for (const end = Date.now() + DEADLINE; got.length < 10 && Date.now() < end;) await sleep(50)
  await sleep(500) // anything after the 10th would be a record that should not be there
  await m.c.disconnect()
  const want = [...Array(10).keys()].map(i => `t-${i}`)
  if (got.join() !== want.join()) mismatch(`read_committed read ${got}, expected ${want}`)
  console.log('txn: read_committed read the 10 committed records, not the aborted 5')
}

async function describe(a, wantSource) {
  const r = await a.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: T }],
    includeSynonyms: false })
  const e = r.resources[0].configEntries.find(c => c.configName === 'retention.ms')
  if (!e) return mismatch('retention.ms not described')
  if (e.configSource !== wantSource) {
    mismatch(`retention.ms=${e.configValue} has source ${e.configSource}, expected ${wantSource}`)
  }
  return e.configValue
}

async function configs() {
  await withAdmin(async a => {
    const alter = entries => a.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: T,
      configEntries: entries }] })
    let v = await describe(a, DEFAULT_CONFIG)
    if (v !== '604800000') mismatch(`retention.ms is ${v}, expected 604800000`)
    await alter([{ name: 'retention.ms', value: '123456789' }])
    v = await describe(a, DYNAMIC_TOPIC_CONFIG)
    if (v !== '123456789') mismatch(`retention.ms after the SET is ${v}, expected 123456789`)
    await alter([])
    v = await describe(a, DEFAULT_CONFIG)
    if (v !== '604800000') mismatch(`retention.ms after the reset is ${v}, expected 604800000`)
  })
  console.log('configs: retention.ms 604800000 (default), set 123456789 (dynamic), reset to the default')
}

async function main() {
  const scenarios = { group: [group, 6], restart: [restart, 1], txn: [txn, 1], configs: [configs, 1] }
  if (!scenarios[SCENARIO]) die(`unknown scenario ${SCENARIO}`)
  const [fn, parts] = scenarios[SCENARIO]
  if (PHASE !== 'after') {
    await withAdmin(a => a.createTopics({ waitForLeaders: true, topics: [{ topic: T, numPartitions: parts,
      replicationFactor: 1 }] }))
  }
  await fn()
  if (errors) die(`${errors} mismatches`)
}

const watchdog = setTimeout(() => die('not done after 150 s'), 150000)
main().then(
  () => {
    clearTimeout(watchdog)
    process.exit(0)
  },
  e => die(`${e.name}: ${e.message}\n${e.stack}`)
)
