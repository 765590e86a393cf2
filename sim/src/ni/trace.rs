//! The NI's event trace: a ring of `trace_depth` 64-bit entries, one per
//! event, read over AXI4-Lite (node page, privileged). This module is the
//! single definition of the entry layout, the event codes and the
//! registers; the RTL generator (`exanet_hdl::ni::trace`) and
//! `exanet trace decode` take them from here.
//!
//! # Entry (64 bits)
//! | bits | field | meaning |
//! |---|---|---|
//! | 31:0 | time | cycle of the event, counted from the end of the last reset (wraps) |
//! | 45:32 | txid | transaction id (see the events) |
//! | 50:46 | info | packet type, completion kind or descriptor op |
//! | 54:51 | detail | reject reason, response flags, completion status or CH_ERR code |
//! | 58:55 | chan | NI channel (DOORBELL) or message class (packets) |
//! | 62:59 | code | the event ([`EventCode`]) |
//!
//! # Events, and the order of the events of one cycle
//! At most [`LANES`] events enter the ring per cycle, in this order (the
//! golden model's call order of a cycle-level bench: receive, write
//! landed, write accepted, packet left); more in one cycle are counted in
//! TRACE_DROPS and not recorded (the NI's timing contract allows at most
//! four: a receive decision never coincides with an accepted write nor
//! with a B that posts; `DOORBELL` and `MBOX_POP` are register writes,
//! one a cycle at most, so they share slot 5 and never add a fifth).
//! 1. `PKT_IN` / `REJECT` — a received packet is decided (consumed):
//!    accepted or refused (`PKT_IN`: info = its type, detail = footer
//!    flags\[3:0\], the reason of a received Nack / MailboxNack; txid = its
//!    footer's), or rejected (`REJECT`: detail = reason, info = the type if
//!    the header is trusted else 0, txid the footer's if trusted else 0);
//!    chan = the message class it arrived on. (A mailbox push is the
//!    `PKT_IN` of a Mailbox answered MailboxAck; a nack received, the
//!    `PKT_IN` of a Nack or MailboxNack; its pop by software,
//!    `MBOX_POP`.)
//! 2. `CQ_POSTED` by that decision (RdmaCompletion → NOTIFY, Nack →
//!    READ_DONE): info = kind, detail = status, txid.
//! 3. `WRITE_LANDED` — an accepted data packet's memory write is complete
//!    (AXI4 B): detail bit 0 = it posts a completion, bit 1 = an
//!    RdmaCompletion; txid = the completion's (else the response's, else 0).
//! 4. `CQ_POSTED` by that write.
//! 5. `DOORBELL` — a DOORBELL write to a channel (not an allreduce
//!    descriptor): chan = channel, info = DESC_CTRL op, txid = DESC_CTRL
//!    txid, detail = the CH_ERR code when refused, else 0 (queued).
//!
//!    Or `MBOX_POP` — an MB_POP write took a message from the mailbox
//!    (one pushed in the same cycle counts; a pop of an empty mailbox is
//!    no event): txid = the message's footer txid (the sender's slot, as
//!    its `PKT_IN`, so the timeline joins them), info = the Mailbox
//!    packet type, chan = its message class, detail = 0.
//! 6. `PKT_OUT` — a packet's tail flit left: info = type, detail = footer
//!    flags\[3:0\] (the reason of a Nack / MailboxNack sent), txid = its
//!    footer's, chan = its message class.
//!
//! # Registers (node page, privileged; mapped only when `trace_depth > 0`)
//! | off | name | access | meaning |
//! |---|---|---|---|
//! | 0x0E0 | TRACE_CTRL | RW | bit 0 ENABLE (reset 0: nothing recorded); writing bit 1 CLEAR zeroes TRACE_COUNT, TRACE_DROPS and WRAPPED; bit 8 WRAPPED (RO): entries were overwritten. A write takes effect from the next cycle (the events of its own cycle are recorded, or not, as before it) |
//! | 0x0E4 | TRACE_DEPTH | RO | entries in the ring |
//! | 0x0E8 | TRACE_COUNT | RO | events recorded since reset or CLEAR (wraps); event n is entry n mod depth |
//! | 0x0EC | TRACE_DROPS | RO | events not recorded (more than four in a cycle) |
//! | 0x0F0 | TRACE_IDX | RW | entry to read, \[log2(depth)-1:0\] |
//! | 0x0F4 | TRACE_LO | RO | entry\[TRACE_IDX\] bits 31:0 (undefined before it is written since the last reset: read only entries below TRACE_COUNT) |
//! | 0x0F8 | TRACE_HI | RO | entry\[TRACE_IDX\] bits 63:32 |
//!
//! Tracing observes only: enabled or not, the NI's behaviour and timing
//! are the same.

use crate::packet::coords::Field;
use crate::packet::header::PacketType;
use anyhow::{bail, Result};

/// Entry field: cycle of the event.
pub const TIME: Field = Field {
    name: "time",
    offset: 0,
    width: 32,
};
/// Entry field: transaction id.
pub const TXID: Field = Field {
    name: "txid",
    offset: 32,
    width: 14,
};
/// Entry field: packet type, completion kind or descriptor op.
pub const INFO: Field = Field {
    name: "info",
    offset: 46,
    width: 5,
};
/// Entry field: reason, flags, status or CH_ERR code.
pub const DETAIL: Field = Field {
    name: "detail",
    offset: 51,
    width: 4,
};
/// Entry field: NI channel or message class.
pub const CHAN: Field = Field {
    name: "chan",
    offset: 55,
    width: 4,
};
/// Entry field: the event code.
pub const CODE: Field = Field {
    name: "code",
    offset: 59,
    width: 4,
};
/// Every entry field, low to high.
pub const FIELDS: [Field; 6] = [TIME, TXID, INFO, DETAIL, CHAN, CODE];

/// Events entering the ring per cycle at most.
pub const LANES: usize = 4;

/// Trace register offsets (node page).
pub const TRACE_CTRL: u32 = 0x0E0;
/// RO ring depth.
pub const TRACE_DEPTH: u32 = 0x0E4;
/// RO events recorded.
pub const TRACE_COUNT: u32 = 0x0E8;
/// RO events dropped.
pub const TRACE_DROPS: u32 = 0x0EC;
/// RW entry index.
pub const TRACE_IDX: u32 = 0x0F0;
/// RO entry bits 31:0.
pub const TRACE_LO: u32 = 0x0F4;
/// RO entry bits 63:32.
pub const TRACE_HI: u32 = 0x0F8;
/// TRACE_CTRL bit 0: record events.
pub const CTRL_ENABLE: Field = Field {
    name: "enable",
    offset: 0,
    width: 1,
};
/// TRACE_CTRL bit 1 (write): clear count, drops and WRAPPED.
pub const CTRL_CLEAR: Field = Field {
    name: "clear",
    offset: 1,
    width: 1,
};
/// TRACE_CTRL bit 8 (RO): the ring has overwritten entries.
pub const CTRL_WRAPPED: Field = Field {
    name: "wrapped",
    offset: 8,
    width: 1,
};

/// Largest `ni.trace_depth`.
pub const MAX_DEPTH: usize = 4096;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventCode {
    /// A received packet was decided and consumed (accepted or refused).
    PktIn = 1,
    /// A received packet was rejected.
    Reject = 2,
    /// A completion-queue entry was posted.
    CqPosted = 3,
    /// A data packet's memory write completed.
    WriteLanded = 4,
    /// A DOORBELL write.
    Doorbell = 5,
    /// A packet's tail flit left.
    PktOut = 6,
    /// Software popped a mailbox message (MB_POP).
    MboxPop = 7,
}

impl EventCode {
    /// Every code.
    pub const ALL: [EventCode; 7] = [
        EventCode::PktIn,
        EventCode::Reject,
        EventCode::CqPosted,
        EventCode::WriteLanded,
        EventCode::Doorbell,
        EventCode::PktOut,
        EventCode::MboxPop,
    ];
    /// The code of `v`, if any.
    pub fn from_code(v: u8) -> Option<EventCode> {
        Self::ALL.into_iter().find(|c| *c as u8 == v)
    }
    /// Upper-case name.
    pub fn name(self) -> &'static str {
        match self {
            EventCode::PktIn => "PKT_IN",
            EventCode::Reject => "REJECT",
            EventCode::CqPosted => "CQ_POSTED",
            EventCode::WriteLanded => "WRITE_LANDED",
            EventCode::Doorbell => "DOORBELL",
            EventCode::PktOut => "PKT_OUT",
            EventCode::MboxPop => "MBOX_POP",
        }
    }
}

/// One event (an entry of the ring).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Cycle (low 32 bits).
    pub time: u32,
    /// What.
    pub code: EventCode,
    /// Channel or class.
    pub chan: u8,
    /// Transaction id.
    pub txid: u16,
    /// Type, kind or op.
    pub info: u8,
    /// Reason, flags, status or CH_ERR.
    pub detail: u8,
}

impl Event {
    /// The 64-bit entry.
    pub fn word(&self) -> u64 {
        let mut w = 0u128;
        w = TIME.put(w, self.time as u64);
        w = TXID.put(w, self.txid as u64);
        w = INFO.put(w, self.info as u64);
        w = DETAIL.put(w, self.detail as u64);
        w = CHAN.put(w, self.chan as u64);
        w = CODE.put(w, self.code as u64);
        w as u64
    }
    /// Decode an entry; an error names the bad code or the bits set
    /// outside the fields.
    pub fn from_word(w: u64) -> Result<Event> {
        let used: u128 = FIELDS.iter().map(|f| f.mask()).sum();
        if w as u128 & !used != 0 {
            bail!("entry 0x{w:016x} has bits set outside its fields (bit 63)");
        }
        let c = CODE.get(w as u128) as u8;
        let Some(code) = EventCode::from_code(c) else {
            bail!("entry 0x{w:016x}: event code {c} names no event");
        };
        Ok(Event {
            time: TIME.get(w as u128) as u32,
            code,
            chan: CHAN.get(w as u128) as u8,
            txid: TXID.get(w as u128) as u16,
            info: INFO.get(w as u128) as u8,
            detail: DETAIL.get(w as u128) as u8,
        })
    }
    /// `info` as a packet type name (events about packets), or the code.
    pub fn ptype_name(&self) -> String {
        match PacketType::from_code(self.info) {
            Ok(t) => format!("{t:?}"),
            Err(_) => format!("type {}", self.info),
        }
    }
}

/// The ring and its registers.
#[derive(Clone, Debug)]
pub struct Trace {
    depth: usize,
    enable: bool,
    wrapped: bool,
    count: u32,
    total: u64,
    drops: u32,
    idx: u32,
    ring: Vec<u64>,
    now: u64,
    /// Cycle of the last event offered, and the events offered in it.
    in_cycle: (u64, usize),
    /// A cycle-level caller sets the time ([`Trace::set_now`]): a
    /// TRACE_CTRL write then takes effect from the next cycle.
    clocked: bool,
    /// That write, until then.
    pending_ctrl: Option<u32>,
    /// Entries written since the reset (0.. of them; a CLEAR restarts at
    /// entry 0, so these stay the ones written).
    filled: usize,
}

impl Trace {
    /// A ring of `depth` entries (0: no trace), disabled.
    pub fn new(depth: usize) -> Trace {
        Trace {
            depth,
            enable: false,
            wrapped: false,
            count: 0,
            total: 0,
            drops: 0,
            idx: 0,
            ring: vec![0; depth],
            now: 0,
            in_cycle: (u64::MAX, 0),
            clocked: false,
            pending_ctrl: None,
            filled: 0,
        }
    }
    /// Entries.
    pub fn depth(&self) -> usize {
        self.depth
    }
    /// The current cycle (cycles since the end of the last reset).
    pub fn set_now(&mut self, cycle: u64) {
        self.clocked = true;
        if cycle != self.now {
            if let Some(v) = self.pending_ctrl.take() {
                self.apply_ctrl(v);
            }
        }
        self.now = cycle;
    }
    fn apply_ctrl(&mut self, v: u32) {
        self.enable = CTRL_ENABLE.get(v as u128) == 1;
        if CTRL_CLEAR.get(v as u128) == 1 {
            self.count = 0;
            self.total = 0;
            self.drops = 0;
            self.wrapped = false;
        }
    }
    /// The current cycle.
    pub fn now(&self) -> u64 {
        self.now
    }
    /// Recording.
    pub fn enabled(&self) -> bool {
        self.depth > 0 && self.enable
    }
    /// Record an event of the current cycle (when enabled).
    pub fn record(&mut self, code: EventCode, chan: usize, txid: u16, info: u8, detail: u8) {
        if !self.enabled() {
            return;
        }
        if self.in_cycle.0 != self.now {
            self.in_cycle = (self.now, 0);
        }
        self.in_cycle.1 += 1;
        if self.in_cycle.1 > LANES {
            self.drops = self.drops.wrapping_add(1);
            return;
        }
        let e = Event {
            time: self.now as u32,
            code,
            chan: chan as u8 & CHAN.max() as u8,
            txid: txid & TXID.max() as u16,
            info: info & INFO.max() as u8,
            detail: detail & DETAIL.max() as u8,
        };
        let at = self.count as usize % self.depth;
        self.ring[at] = e.word();
        self.count = self.count.wrapping_add(1);
        self.total += 1;
        self.wrapped |= self.total > self.depth as u64;
        self.filled = self.filled.max(at + 1);
    }
    /// Entries written since the reset: `0..filled` (the others read
    /// undefined values in the RTL, whose RAM a reset does not clear).
    pub fn filled(&self) -> usize {
        self.filled
    }
    /// The events in the ring, oldest first.
    pub fn events(&self) -> Vec<u64> {
        let n = (self.total.min(self.depth as u64)) as usize;
        (0..n)
            .map(|k| self.ring[(self.count as usize + self.depth - n + k) % self.depth.max(1)])
            .collect()
    }
    /// Register read (`off` one of the TRACE_* offsets).
    pub fn read(&self, off: u32) -> u32 {
        match off {
            TRACE_CTRL => self.enable as u32 | (self.wrapped as u32) << CTRL_WRAPPED.offset,
            TRACE_DEPTH => self.depth as u32,
            TRACE_COUNT => self.count,
            TRACE_DROPS => self.drops,
            TRACE_IDX => self.idx,
            TRACE_LO => self.ring[self.idx as usize] as u32,
            TRACE_HI => (self.ring[self.idx as usize] >> 32) as u32,
            _ => 0,
        }
    }
    /// Register write; `false` for a read-only one.
    pub fn write(&mut self, off: u32, v: u32) -> bool {
        match off {
            TRACE_CTRL => {
                if self.clocked {
                    self.pending_ctrl = Some(v);
                } else {
                    self.apply_ctrl(v);
                }
                true
            }
            TRACE_IDX => {
                self.idx = v & (self.depth as u32 - 1);
                true
            }
            _ => false,
        }
    }
    /// The register at node-page offset `off` (mapped when `depth > 0`).
    pub fn is_reg(off: u32) -> bool {
        (TRACE_CTRL..=TRACE_HI).contains(&off)
    }
}

/// A trace dump: the text `exanet trace decode` reads. One section per
/// NI: a line `# node NAME`, then its entries oldest first, one per line
/// as 16 hex digits (the 64-bit entry, e.g. `3000000500000004`); lines
/// starting with `#` are comments, blank lines are skipped. `sections`:
/// (node name, entries), e.g. from [`Trace::events`] or from TRACE_LO /
/// TRACE_HI reads.
pub fn dump_text(sections: &[(String, Vec<u64>)]) -> String {
    let mut s = String::from(
        "# exanet NI event trace dump: one 64-bit entry per line (hex), oldest first\n",
    );
    for (name, words) in sections {
        s.push_str(&format!("# node {name}\n"));
        for w in words {
            s.push_str(&format!("{w:016x}\n"));
        }
    }
    s
}

/// Parse a dump ([`dump_text`]); an error names the line and what is
/// wrong with it. Entries before any `# node` line belong to node `0`.
pub fn parse_dump(text: &str) -> Result<Vec<(String, Vec<Event>)>> {
    let mut out: Vec<(String, Vec<Event>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("# node ") {
            out.push((name.trim().to_string(), Vec::new()));
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let hex = t.strip_prefix("0x").unwrap_or(t).replace('_', "");
        let w = u64::from_str_radix(&hex, 16)
            .ok()
            .filter(|_| !hex.is_empty() && hex.len() <= 16)
            .ok_or_else(|| anyhow::anyhow!("line {}: `{t}` is not a 64-bit hex entry", i + 1))?;
        let e = Event::from_word(w).map_err(|e| anyhow::anyhow!("line {}: {e}", i + 1))?;
        if out.is_empty() {
            out.push(("0".to_string(), Vec::new()));
        }
        out.last_mut().expect("a section").1.push(e);
    }
    Ok(out)
}

/// The transaction an event belongs to: packetizer messages (Mailbox,
/// MailboxAck, MailboxNack) by their slot txid, everything else (RDMA
/// transfers, their completions and nacks) by the descriptor's txid.
fn family(e: &Event) -> &'static str {
    let msg = |t: u8| {
        [
            PacketType::Mailbox,
            PacketType::MailboxAck,
            PacketType::MailboxNack,
        ]
        .iter()
        .any(|p| p.code() == t)
    };
    match e.code {
        EventCode::PktIn | EventCode::PktOut | EventCode::Reject | EventCode::MboxPop
            if msg(e.info) =>
        {
            "message"
        }
        _ => "transfer",
    }
}

/// One event in words.
pub fn describe(e: &Event) -> String {
    use crate::ni::completion::{CqKind, CqStatus};
    use crate::ni::errors::RejectReason;
    match e.code {
        EventCode::Doorbell => {
            let op = match e.info {
                0 => "write".to_string(),
                1 => "read".to_string(),
                o => format!("op {o}"),
            };
            let r = if e.detail == 0 {
                "queued".to_string()
            } else {
                format!("refused CH_ERR {}", e.detail)
            };
            format!("channel {} {op} {r}", e.chan)
        }
        EventCode::PktOut | EventCode::PktIn => {
            let t = e.ptype_name();
            let f = match PacketType::from_code(e.info) {
                Ok(PacketType::Nack | PacketType::MailboxNack | PacketType::RdmaCompletion) => {
                    format!(" flags {}", e.detail)
                }
                _ => String::new(),
            };
            format!("{t} class {}{f}", e.chan)
        }
        EventCode::Reject => {
            let r = RejectReason::from_code(e.detail)
                .map_or(format!("reason {}", e.detail), |r| format!("{r:?}"));
            let t = if e.info == 0 {
                "untrusted header".to_string()
            } else {
                e.ptype_name()
            };
            format!("{r} ({t}) class {}", e.chan)
        }
        EventCode::CqPosted => {
            let k =
                CqKind::from_code(e.info).map_or(format!("kind {}", e.info), |k| format!("{k:?}"));
            let st = CqStatus::from_code(e.detail)
                .map_or(format!("status {}", e.detail), |s| format!("{s:?}"));
            format!("{k} {st}")
        }
        EventCode::MboxPop => format!("{} taken by software class {}", e.ptype_name(), e.chan),
        EventCode::WriteLanded => {
            let mut p = Vec::new();
            if e.detail & 1 != 0 {
                p.push("posts completion");
            }
            if e.detail & 2 != 0 {
                p.push("sends RdmaCompletion");
            }
            if p.is_empty() {
                "not the last packet".to_string()
            } else {
                p.join(", ")
            }
        }
    }
}

/// An event with its time, node (section) and place in its ring.
type Placed<'a> = (u32, usize, usize, &'a Event);

/// A dump as per-transaction timelines: events grouped by transaction
/// (message slot or transfer txid, across every node of the dump), in
/// time order, each with the cycles since the transaction's previous
/// event and since its first; then a count per event. Times of
/// different nodes compare when their NIs left reset in the same cycle
/// (as in a node-pair run).
pub fn timeline(sections: &[(String, Vec<Event>)]) -> String {
    use std::collections::BTreeMap;
    let mut groups: BTreeMap<(&str, u16), Vec<Placed>> = BTreeMap::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (si, (_, evs)) in sections.iter().enumerate() {
        for (k, e) in evs.iter().enumerate() {
            groups
                .entry((family(e), e.txid))
                .or_default()
                .push((e.time, si, k, e));
            *counts.entry(e.code.name()).or_default() += 1;
        }
    }
    let mut order: Vec<_> = groups.into_iter().collect();
    for (_, v) in &mut order {
        v.sort_by_key(|&(t, si, k, _)| (t, si, k));
    }
    // Transactions in the order of their first event.
    order.sort_by_key(|(_, v)| (v[0].0, v[0].1, v[0].2));
    let mut s = String::new();
    let total: usize = sections.iter().map(|(_, e)| e.len()).sum();
    s.push_str(&format!(
        "{total} events, {} node(s), {} transaction(s)\n",
        sections.len(),
        order.len()
    ));
    for ((fam, txid), v) in &order {
        let (t0, tl) = (v[0].0, v[v.len() - 1].0);
        s.push_str(&format!(
            "\n{fam} txid {txid} (0x{txid:04x}): {} event(s), {} cycles\n",
            v.len(),
            tl.wrapping_sub(t0)
        ));
        let mut prev = t0;
        for &(t, si, _, e) in v {
            s.push_str(&format!(
                "  [{}] {t:>10} {:>+7} {:>+7}  {:<12} {}\n",
                sections[si].0,
                t.wrapping_sub(prev) as i64,
                t.wrapping_sub(t0) as i64,
                e.code.name(),
                describe(e)
            ));
            prev = t;
        }
    }
    s.push_str("\nevents by kind:");
    for (k, n) in counts {
        s.push_str(&format!(" {k} {n}"));
    }
    s.push('\n');
    s
}

/// Check `ni.trace_depth`.
pub fn check_depth(d: usize) -> Result<()> {
    let lo = 2 * LANES;
    if d != 0 && (!d.is_power_of_two() || !(lo..=MAX_DEPTH).contains(&d)) {
        bail!(
            "ni.trace_depth = {d}: must be 0 (no trace) or a power of two in {lo}..={MAX_DEPTH} (the ring is {LANES} banks of at least two entries)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_tile_below_bit_63_and_words_round_trip() {
        let mut next = 0;
        for f in FIELDS {
            assert_eq!(f.offset, next, "{}", f.name);
            next += f.width;
        }
        assert_eq!(next, 63);
        let e = Event {
            time: 0xDEAD_BEEF,
            code: EventCode::Reject,
            chan: 1,
            txid: 0x3ABC,
            info: 17,
            detail: 11,
        };
        assert_eq!(Event::from_word(e.word()).unwrap(), e);
        assert!(Event::from_word(1 << 63)
            .unwrap_err()
            .to_string()
            .contains("bit 63"));
        assert!(Event::from_word(0)
            .unwrap_err()
            .to_string()
            .contains("code 0"));
    }

    #[test]
    fn dumps_round_trip_and_decode_into_timelines() {
        let ev = |time, code, txid, info, detail| Event {
            time,
            code,
            chan: 0,
            txid,
            info,
            detail,
        };
        let w = PacketType::RdmaWrite.code();
        let a = vec![
            ev(10, EventCode::Doorbell, 7, 0, 0).word(),
            ev(14, EventCode::PktOut, 7, w, 0).word(),
        ];
        let b = vec![
            ev(30, EventCode::PktIn, 7, w, 0).word(),
            ev(35, EventCode::WriteLanded, 7, 0, 1).word(),
            ev(35, EventCode::CqPosted, 7, 1, 0).word(),
            ev(40, EventCode::PktIn, 9, PacketType::Mailbox.code(), 0).word(),
            ev(52, EventCode::MboxPop, 9, PacketType::Mailbox.code(), 0).word(),
        ];
        let text = dump_text(&[("a".into(), a), ("b".into(), b)]);
        let d = parse_dump(&text).unwrap();
        assert_eq!((d.len(), d[0].1.len(), d[1].1.len()), (2, 2, 5));
        let t = timeline(&d);
        assert!(
            t.starts_with("7 events, 2 node(s), 2 transaction(s)"),
            "{t}"
        );
        assert!(
            t.contains("transfer txid 7 (0x0007): 5 event(s), 25 cycles"),
            "{t}"
        );
        // Latency from the previous event and from the first.
        assert!(
            t.contains("[b]         30     +16     +20  PKT_IN       RdmaWrite class 0"),
            "{t}"
        );
        assert!(t.contains("CQ_POSTED    WriteIn Ok"), "{t}");
        // A mailbox pop joins its message's timeline (the push's txid).
        assert!(
            t.contains("message txid 9 (0x0009): 2 event(s), 12 cycles"),
            "{t}"
        );
        assert!(
            t.contains("+12     +12  MBOX_POP     Mailbox taken by software class 0"),
            "{t}"
        );
        assert!(t.contains("MBOX_POP 1"), "{t}");
        for (bad, want) in [
            (
                "# node x\n2800000000000000\nzz\n",
                "line 3: `zz` is not a 64-bit hex entry",
            ),
            (
                "8000000000000000\n",
                "line 1: entry 0x8000000000000000 has bits set",
            ),
            (
                "0000000000000001\n",
                "line 1: entry 0x0000000000000001: event code 0",
            ),
            ("12345678123456781\n", "line 1: `12345678123456781` is not"),
        ] {
            let e = parse_dump(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn ring_keeps_the_last_depth_events_and_drops_past_four_a_cycle() {
        let mut t = Trace::new(4);
        t.record(EventCode::Doorbell, 0, 1, 0, 0);
        assert_eq!(t.read(TRACE_COUNT), 0, "disabled: nothing recorded");
        t.write(TRACE_CTRL, 1);
        for c in 0..3u64 {
            t.set_now(c);
            for k in 0..(c as u16 + 2) {
                t.record(EventCode::PktOut, 1, k, 0, 0);
            }
        }
        // 2 + 3 + 4 events, none dropped; the last four kept.
        assert_eq!(t.read(TRACE_COUNT), 9);
        assert_eq!(t.read(TRACE_DROPS), 0);
        assert_eq!(t.read(TRACE_CTRL), 1 | 1 << 8);
        let ev: Vec<_> = t
            .events()
            .iter()
            .map(|&w| Event::from_word(w).unwrap())
            .collect();
        assert_eq!(
            ev.iter().map(|e| (e.time, e.txid)).collect::<Vec<_>>(),
            [(2, 0), (2, 1), (2, 2), (2, 3)]
        );
        t.set_now(3);
        for _ in 0..5 {
            t.record(EventCode::PktIn, 0, 0, 0, 0);
        }
        assert_eq!(t.read(TRACE_DROPS), 1);
        t.write(TRACE_IDX, 6);
        assert_eq!(t.read(TRACE_IDX), 2);
        t.write(TRACE_CTRL, 3);
        // From the next cycle.
        assert_eq!(t.read(TRACE_COUNT), 13);
        t.set_now(4);
        assert_eq!(
            (t.read(TRACE_COUNT), t.read(TRACE_DROPS), t.read(TRACE_CTRL)),
            (0, 0, 1)
        );
        assert!(check_depth(0).is_ok() && check_depth(64).is_ok());
        for bad in [2, 4, 12, 8192] {
            let e = check_depth(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("ni.trace_depth = {bad}")), "{e}");
        }
    }
}
