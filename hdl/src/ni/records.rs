//! The NI's packed records: the entries of its queues, laid out by
//! [`Record`] (most significant field first) with the widths of the golden
//! fields they carry, so every slice the templates take of them
//! (`{{ r.cq.at("txid") }}`) is computed, and a golden field that changes
//! width moves every slice with it.

use super::codes::{CQ_CODE_BITS, REASON_BITS};
use super::vgen::Record;
use exanet_sim::ni::descriptor::{CTRL_NOTIFY, CTRL_TXID};
use exanet_sim::ni::rdma_tx::READ_REQ_LEN;
use exanet_sim::ni::regs::{DESC_ADDR_HI_BITS, PKT_SEND_LEN};
use exanet_sim::packet::coords::COORDS_BITS;
use exanet_sim::packet::footer::{FLAGS, SRC, TXID};
use exanet_sim::packet::header::{PDID, PTYPE, SIZE, VADDR};

/// The records of the queue entries.
#[derive(Clone, Debug)]
pub struct Records {
    /// Descriptor queue entry: the staged descriptor at its DOORBELL, the
    /// channel's PDID then.
    pub dq: Record,
    /// Read queue entry: a read request to serve.
    pub rd: Record,
    /// Completion queue entry.
    pub cq: Record,
    /// Error queue entry: a rejected packet's trusted fields and reason.
    pub eq: Record,
    /// Response queue entry: a response packet's fields.
    pub rq: Record,
    /// Landing queue entry: the completion and response a data packet
    /// posts when its write lands, each with a valid bit.
    pub lq: Record,
    /// Mailbox message metadata; with the message's footer txid when the
    /// event trace is generated (its `MBOX_POP` names the message).
    pub mb: Record,
}

impl Records {
    /// The records; `marked` renders their slices as names (drift test);
    /// `trace`: the event trace is generated (`ni.trace_depth > 0`).
    pub fn new(marked: bool, trace: bool) -> Records {
        let w = |f: exanet_sim::packet::coords::Field| f.width as usize;
        let coords = COORDS_BITS as usize;
        // A 42-bit address: DESC_*_HI above a 32-bit DESC_*_LO.
        let addr = 32 + w(DESC_ADDR_HI_BITS);
        debug_assert_eq!(addr, w(VADDR));
        let cq = Record::new(
            vec![
                ("pdid", w(PDID)),
                ("peer", w(SRC)),
                ("txid", w(TXID)),
                ("reason", REASON_BITS),
                ("status", CQ_CODE_BITS),
                ("kind", CQ_CODE_BITS),
            ],
            marked,
        );
        let rq = Record::new(
            vec![
                ("flags", w(FLAGS)),
                ("txid", w(TXID)),
                ("pdid", w(PDID)),
                ("dest", coords),
                ("ptype", w(PTYPE)),
            ],
            marked,
        );
        Records {
            dq: Record::new(
                vec![
                    ("pdid", w(PDID)),
                    ("txid", w(CTRL_TXID)),
                    ("notify", w(CTRL_NOTIFY)),
                    // Write or read: bit 0 of the op (a doorbell with any
                    // other op is refused).
                    ("op", 1),
                    ("dest", coords),
                    ("len", 32),
                    ("raddr", addr),
                    ("laddr", addr),
                ],
                marked,
            ),
            rd: Record::new(
                vec![
                    ("notify", 1),
                    ("txid", w(TXID)),
                    ("pdid", w(PDID)),
                    ("requester", w(SRC)),
                    ("len", w(READ_REQ_LEN)),
                    ("land", w(VADDR)),
                    ("src", w(VADDR)),
                ],
                marked,
            ),
            eq: Record::new(
                vec![
                    ("vaddr", w(VADDR)),
                    ("size", w(SIZE)),
                    ("pdid", w(PDID)),
                    ("src", w(SRC)),
                    ("txid", w(TXID)),
                    ("ptype", w(PTYPE)),
                    ("footer_ok", 1),
                    ("header_ok", 1),
                    ("reason", REASON_BITS),
                ],
                marked,
            ),
            lq: Record::new(
                vec![
                    ("data", 1),
                    ("cq_v", 1),
                    ("cq", cq.width()),
                    ("rq_v", 1),
                    ("rq", rq.width()),
                ],
                marked,
            ),
            mb: Record::new(
                [("len", w(PKT_SEND_LEN)), ("pdid", w(PDID)), ("src", w(SRC))]
                    .into_iter()
                    .chain(trace.then_some(("txid", w(TXID))))
                    .collect(),
                marked,
            ),
            cq,
            rq,
        }
    }
}
