import Database from "better-sqlite3";
const db = new Database(process.argv[2] + "/agboss.sqlite");
db.pragma("journal_mode = wal"); db.pragma("synchronous = NORMAL");
const threads = db.prepare("select distinct thread_id from agboss_checkpoints").all().map(r => r.thread_id);
const st = db.prepare("select * from agboss_checkpoints where thread_id = ? and checkpoint_ns = ? order by checkpoint_id desc limit ?");
const up = db.prepare("update agboss_leases set expires_at = expires_at + 1 where key = ?");
const lease = db.prepare("select key from agboss_leases limit 1").get().key;
for (let r = 0; r < 3; r++) {
  let a = 0, b = 0;
  for (const t of threads) {
    db.exec("begin immediate"); up.run(lease); db.exec("commit");
    let t0 = performance.now(); st.all(t, "", 1); a += performance.now() - t0;
    t0 = performance.now(); st.all(t, "", 1); b += performance.now() - t0;
  }
  console.log(`after commit ${(a / threads.length * 1000).toFixed(1)} µs, again ${(b / threads.length * 1000).toFixed(1)} µs (${threads.length} threads)`);
}
