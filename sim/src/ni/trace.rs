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
//! with a B that posts).
//! 1. `PKT_IN` / `REJECT` — a received packet is decided (consumed):
//!    accepted or refused (`PKT_IN`: info = its type, detail = footer
//!    flags\[3:0\], the reason of a received Nack / MailboxNack; txid = its
//!    footer's), or rejected (`REJECT`: detail = reason, info = the type if
//!    the header is trusted else 0, txid the footer's if trusted else 0);
//!    chan = the message class it arrived on. (A mailbox push is the
//!    `PKT_IN` of a Mailbox answered MailboxAck; a nack received, the
//!    `PKT_IN` of a Nack or MailboxNack.)
//! 2. `CQ_POSTED` by that decision (RdmaCompletion → NOTIFY, Nack →
//!    READ_DONE): info = kind, detail = status, txid.
//! 3. `WRITE_LANDED` — an accepted data packet's memory write is complete
//!    (AXI4 B): detail bit 0 = it posts a completion, bit 1 = an
//!    RdmaCompletion; txid = the completion's (else the response's, else 0).
//! 4. `CQ_POSTED` by that write.
//! 5. `DOORBELL` — a DOORBELL write to a channel (not an allreduce
//!    descriptor): chan = channel, info = DESC_CTRL op, txid = DESC_CTRL
//!    txid, detail = the CH_ERR code when refused, else 0 (queued).
//! 6. `PKT_OUT` — a packet's tail flit left: info = type, detail = footer
//!    flags\[3:0\] (the reason of a Nack / MailboxNack sent), txid = its
//!    footer's, chan = its message class.
//!
//! # Registers (node page, privileged; mapped only when `trace_depth > 0`)
//! | off | name | access | meaning |
//! |---|---|---|---|
//! | 0x0E0 | TRACE_CTRL | RW | bit 0 ENABLE (reset 0: nothing recorded); writing bit 1 CLEAR zeroes TRACE_COUNT, TRACE_DROPS and WRAPPED; bit 8 WRAPPED (RO): entries were overwritten |
//! | 0x0E4 | TRACE_DEPTH | RO | entries in the ring |
//! | 0x0E8 | TRACE_COUNT | RO | events recorded since reset or CLEAR (wraps); event n is entry n mod depth |
//! | 0x0EC | TRACE_DROPS | RO | events not recorded (more than four in a cycle) |
//! | 0x0F0 | TRACE_IDX | RW | entry to read, \[log2(depth)-1:0\] |
//! | 0x0F4 | TRACE_LO | RO | entry\[TRACE_IDX\] bits 31:0 (0 before it is written) |
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
}

impl EventCode {
    /// Every code.
    pub const ALL: [EventCode; 6] = [
        EventCode::PktIn,
        EventCode::Reject,
        EventCode::CqPosted,
        EventCode::WriteLanded,
        EventCode::Doorbell,
        EventCode::PktOut,
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
        }
    }
    /// Entries.
    pub fn depth(&self) -> usize {
        self.depth
    }
    /// The current cycle (cycles since the end of the last reset).
    pub fn set_now(&mut self, cycle: u64) {
        self.now = cycle;
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
                self.enable = CTRL_ENABLE.get(v as u128) == 1;
                if CTRL_CLEAR.get(v as u128) == 1 {
                    self.count = 0;
                    self.total = 0;
                    self.drops = 0;
                    self.wrapped = false;
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

/// Check `ni.trace_depth`.
pub fn check_depth(d: usize) -> Result<()> {
    if d != 0 && (!d.is_power_of_two() || !(LANES..=MAX_DEPTH).contains(&d)) {
        bail!(
            "ni.trace_depth = {d}: must be 0 (no trace) or a power of two in {LANES}..={MAX_DEPTH} (the ring is {LANES} banks)"
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
        assert_eq!(
            (t.read(TRACE_COUNT), t.read(TRACE_DROPS), t.read(TRACE_CTRL)),
            (0, 0, 1)
        );
        assert!(check_depth(0).is_ok() && check_depth(64).is_ok());
        for bad in [2, 12, 8192] {
            let e = check_depth(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("ni.trace_depth = {bad}")), "{e}");
        }
    }
}
