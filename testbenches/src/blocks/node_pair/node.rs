//! One node of the `node-pair` bench: its golden NI, memory, ports, and
//! its software's and memory's agents; what software remembers about its
//! writes ([`Meta`]) and its RDMA reads ([`ReadDesc`]).

use super::{Fault, LAND, REGION, SOURCES};
use crate::blocks::ni::agents::{Access, AxilMaster, NiPorts, TxFlits};
pub(super) use crate::blocks::ni::agents::{AxiReadSlave, AxiWriteSlave};
use crate::verilator::Port;
use anyhow::Result;
use exanet_hdl::node_pair::NodePairParams;
use exanet_sim::ni::{regs, trace, Descriptor, Ni, NiParams, Packet, RejectReason, SparseMemory};
use exanet_sim::packet::coords::Coords;
use exanet_sim::rng::Rng;
use std::collections::{HashMap, VecDeque};

/// What software remembers about a write: nothing, or the transfer a
/// doorbell or send starts.
#[derive(Clone, Debug)]
pub(super) enum Meta {
    None,
    Doorbell {
        dest: usize,
        txid: u16,
        notify: bool,
        len: u64,
    },
    Send {
        dest: usize,
        id: u32,
        bytes: Vec<u8>,
    },
    /// The doorbell of an RDMA write to an absent endpoint (an fpga of a
    /// node's coordinates beyond its router's local ports): nothing
    /// completes, that router drops its packet.
    Absent,
    /// The doorbell of an access node `dest`'s NI must reject (`reason`):
    /// a one-packet RDMA write (`read: false`) or an RDMA read request
    /// (`read: true`, answered Nack: READ_DONE / REMOTE_DENIED with the
    /// reason at the requester) to an address no window of `dest` opens to
    /// the job's PDID.
    Reject {
        dest: usize,
        txid: u16,
        reason: RejectReason,
        read: bool,
    },
    /// An RDMA read's doorbell; `repost`: a read its server refused
    /// (read queue full), posted again (its completions are expected
    /// already).
    Read {
        desc: ReadDesc,
        repost: bool,
    },
    /// An allreduce descriptor's DOORBELL: this node's part in
    /// collective `post.coll`.
    Allreduce {
        post: super::allreduce::ArPost,
    },
}

/// An RDMA read of `len` bytes of `server`'s memory at `src` into the
/// requester's at `dst`, on `channel`.
#[derive(Clone, Copy, Debug)]
pub(super) struct ReadDesc {
    pub(super) server: usize,
    pub(super) channel: usize,
    pub(super) src: u64,
    pub(super) dst: u64,
    pub(super) len: u64,
    pub(super) notify: bool,
    pub(super) txid: u16,
}

/// A software access.
pub(super) type Op = Access<Meta>;

/// A node's ports: its NI's (`n{i}_…`, flits out `n{i}_tx_*`), the
/// flits delivered to it, and the error counters.
#[derive(Clone)]
pub(crate) struct NodePorts {
    pub(crate) ni: NiPorts,
    pub(crate) rx_valid: Port,
    pub(crate) rx_data: Port,
    pub(crate) rx_head: Port,
    pub(crate) rx_tail: Port,
    pub(crate) rx_vc: Port,
    /// Error counters that must stay 0: name, port.
    pub(crate) errors: Vec<(String, Port)>,
    /// The router's `dropped_packets` per port (0 but for packets to an
    /// absent endpoint).
    pub(crate) dropped: Vec<Port>,
}

impl NodePorts {
    /// The router's `dropped_packets`, summed over its ports.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.iter().map(|q| q.get()).sum()
    }
}

/// One node: golden NI, memory, software and memory agents.
pub(super) struct Node {
    pub(super) me: Coords,
    pub(super) golden: Ni,
    pub(super) mem: SparseMemory,
    pub(super) p: Option<NodePorts>,
    pub(super) sw: VecDeque<Op>,
    pub(super) axil: AxilMaster<Meta>,
    pub(super) rd: AxiReadSlave,
    pub(super) wr: AxiWriteSlave,
    pub(super) tx: TxFlits,
    /// The packet being delivered: its flits so far, its head's VC.
    pub(super) rx_words: Vec<u128>,
    pub(super) rx_vc: Option<u64>,
    /// Delivered packets awaiting their decision, per class of their VC.
    pub(super) arrived: [VecDeque<Packet>; 2],
    pub(super) golden_dirty: bool,
    /// The class whose Busy packet the golden model confirmed last.
    pub(super) busy_checked: Option<usize>,
    /// RDMA reads accepted (doorbell) whose READ_DONE is outstanding, by
    /// txid; reads refused by their server (read queue full), to post
    /// again.
    pub(super) reads: HashMap<u16, ReadDesc>,
    pub(super) repost: VecDeque<ReadDesc>,
    pub(super) cq_words: Vec<u32>,
    pub(super) mb: Option<(u32, u32, Vec<u8>)>,
    pub(super) txid_next: u16,
    pub(super) msg_next: u32,
    /// Golden writes not yet landed (B), oldest first: for the last packet
    /// of a measured RDMA write, its doorbell cycle and whether isolated.
    pub(super) landing: VecDeque<Option<(u64, bool)>>,
    /// Software leaves the completion queue alone (polls only the mailbox).
    pub(super) hold_cq: bool,
    /// Drain polls so far (every [`STATUS_POLL`]th also reads STATUS).
    pub(super) polls: u64,
    /// Packets sent to an absent endpoint of this node's coordinates (an
    /// fpga beyond its router's local ports): its router drops each.
    pub(super) drops_due: u64,
    /// Error-queue entries (ERRQ_W0..W4) of the packets this NI rejected,
    /// oldest first, that software has not read yet; the words of the
    /// entry being read.
    pub(super) errq_due: VecDeque<[u32; 5]>,
    pub(super) errq_words: Vec<u32>,
    /// Software leaves the error queue alone (an overflow burst).
    pub(super) hold_errq: bool,
}

/// Every this many polls of a drain, software also reads STATUS
/// (privileged; its sticky error bits and queue flags compared with the
/// golden model's like every read). Only in drains: more reads during
/// traffic change its timing enough to lose the rarest fixed-seed
/// coverage (reads refused by a full read queue).
const STATUS_POLL: u64 = 8;

/// The window the set-up enables with another PDID than the job's
/// ([`Node::fill_windows`]): the job's accesses to its range are rejected
/// `Pdid` (every other address outside windows 0 and 1 `Window`).
pub(super) const PDID_WINDOW: usize = 2;

/// Base address of [`PDID_WINDOW`] (as [`Node::fill_windows`] sets it).
pub(super) const PDID_WINDOW_BASE: u64 = (1 << 32) | (0x1000 * (PDID_WINDOW as u64 + 1));

/// An address range no window opens (above every window the set-up
/// writes, below the NI's 40 address bits).
pub(super) const NO_WINDOW: u64 = 0x3_0000_0000;

/// A window's five registers.
const WIN_FIELDS: [u32; 5] = [
    regs::WIN_BASE_LO,
    regs::WIN_BASE_HI,
    regs::WIN_SIZE_LO,
    regs::WIN_SIZE_HI,
    regs::WIN_CTRL,
];

impl Node {
    pub(super) fn new(
        params: &NodePairParams,
        me: Coords,
        index: usize,
        fault: Fault,
    ) -> Result<Node> {
        let mut rng = Rng::new(0x9A1B + index as u64);
        let mut mem = SparseMemory::new();
        for &b in &SOURCES {
            let mut buf = vec![0u8; REGION as usize];
            for chunk in buf.chunks_mut(8) {
                chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
            }
            mem.write(b, &buf);
        }
        let mut golden = Ni::new(&params.ni.ni, me)?;
        let mut gmem = mem.clone();
        if fault == Fault::GoldenMemByte && index == 1 {
            gmem.write(LAND + REGION - 1, &[0x5A]);
        }
        *golden.mem_mut() = gmem;
        golden.set_write_log(true);
        golden.set_explicit_events(true);
        Ok(Node {
            me,
            golden,
            mem,
            p: None,
            sw: VecDeque::new(),
            axil: AxilMaster::new(),
            rd: AxiReadSlave::new(),
            wr: AxiWriteSlave::new(),
            tx: TxFlits::new(params.ni.vc as u64, params.ni.resp_vc as u64),
            rx_words: Vec::new(),
            rx_vc: None,
            arrived: Default::default(),
            golden_dirty: true,
            busy_checked: None,
            reads: HashMap::new(),
            repost: VecDeque::new(),
            cq_words: Vec::new(),
            mb: None,
            txid_next: 1,
            msg_next: 1,
            landing: VecDeque::new(),
            hold_cq: false,
            polls: 0,
            drops_due: 0,
            errq_due: VecDeque::new(),
            errq_words: Vec::new(),
            hold_errq: false,
        })
    }

    /// After a reset pulse in the middle of a run: a fresh golden model
    /// and agents; the memory as the RTL's memory holds it now (a write the
    /// golden model made at a decision may not have reached AXI4 before
    /// the reset), with `fault`'s byte again.
    pub(super) fn after_reset(
        &mut self,
        params: &NodePairParams,
        index: usize,
        fault: Fault,
    ) -> Result<()> {
        let mut fresh = Node::new(params, self.me, index, fault)?;
        let mut gmem = self.mem.clone();
        if fault == Fault::GoldenMemByte && index == 1 {
            gmem.write(LAND + REGION - 1, &[0x5A]);
        }
        *fresh.golden.mem_mut() = gmem;
        fresh.mem = std::mem::take(&mut self.mem);
        fresh.p = self.p.take();
        fresh.txid_next = self.txid_next;
        fresh.msg_next = self.msg_next;
        *self = fresh;
        Ok(())
    }

    pub(super) fn sw_idle(&self) -> bool {
        self.sw.is_empty() && self.axil.idle()
    }

    pub(super) fn idle(&self) -> bool {
        self.sw_idle() && self.idle_but_polls()
    }

    /// Idle but for software's reads (the polls of a drain: with nothing
    /// expected, they find nothing; an unexpected completion or message
    /// they find is still checked when read). With many nodes, software
    /// that polls is rarely idle on all of them in the same cycle.
    pub(super) fn quiet(&self) -> bool {
        self.sw.iter().all(|op| matches!(op, Op::Read { .. }))
            && self.axil.only_reads()
            && self.idle_but_polls()
    }

    fn idle_but_polls(&self) -> bool {
        self.rd.idle()
            && self.wr.idle()
            && self.tx.idle()
            && self.rx_words.is_empty()
            && self.arrived.iter().all(|q| q.is_empty())
            && self.repost.is_empty()
            && !self.golden.has_packet()
            && self.golden.engine().is_none_or(|e| e.idle())
            && self.p.as_ref().is_some_and(|p| p.ni.tx_busy.get() == 0)
    }

    /// What keeps the node from [`Node::idle`].
    pub(super) fn busy_with(&self) -> String {
        let mut v = Vec::new();
        let mut add = |c: bool, s: &str| {
            if c {
                v.push(s.to_string())
            }
        };
        add(!self.sw_idle(), "software");
        add(!self.rd.idle(), "memory reads");
        add(!self.wr.idle(), "memory writes");
        add(!self.tx.idle(), "flits out");
        add(!self.rx_words.is_empty(), "a packet arriving");
        add(
            self.arrived.iter().any(|q| !q.is_empty()),
            "packets to decide",
        );
        add(!self.repost.is_empty(), "reads to post again");
        add(self.golden.has_packet(), "golden packets to send");
        add(
            self.golden.engine().is_some_and(|e| !e.idle()),
            "golden allreduce running or queued",
        );
        add(
            self.p.as_ref().is_some_and(|p| p.ni.tx_busy.get() != 0),
            "tx_busy",
        );
        v.join(", ")
    }

    /// Queue the staging writes of an RDMA write of `len` bytes from
    /// `laddr` to `dest`'s `raddr` on channel `c`, with the next txid
    /// ([`Descriptor::staging_writes`]); returns the channel's register
    /// page and the txid, for the caller's doorbell.
    pub(super) fn write_descriptor(
        &mut self,
        c: usize,
        (laddr, raddr, len): (u64, u64, u64),
        dest: Coords,
        notify: bool,
    ) -> (u32, u16) {
        let txid = self.txid_next;
        self.txid_next = if txid == 0x3FFF { 1 } else { txid + 1 };
        let d = Descriptor {
            op: exanet_sim::ni::Op::Write,
            laddr,
            raddr,
            len: len as u32,
            dest,
            notify,
            txid,
        };
        let page = regs::ch_page(c);
        for (f, v) in d.staging_writes() {
            self.write(page + f.offset(), v, false, Meta::None);
        }
        (page, txid)
    }

    pub(super) fn write(&mut self, addr: u32, data: u32, prot: bool, meta: Meta) {
        self.sw.push_back(Op::Write {
            addr,
            data,
            prot,
            meta,
        });
    }

    /// Right after a reset pulse (before the set-up's writes), read back,
    /// privileged, the state software configures: every window's five
    /// registers, the channel PDIDs, CONTROL, MBOX_CTRL, IRQ_ENABLE,
    /// TRACE_CTRL, and every channel page's registers (CH_PDID, CH_ERR,
    /// the staged descriptor, PKT_DEST, the packetizer window). Each read
    /// is compared with the golden model's (fresh after the reset: reset
    /// values), so a register the reset missed shows while it still holds
    /// what software wrote before (the set-up fills the windows it does
    /// not use, [`Node::fill_windows`]). Returns the reads queued.
    pub(super) fn reset_readback(&mut self, ni: &NiParams) -> u64 {
        let mut addrs = Vec::new();
        for w in 0..ni.windows {
            addrs.extend(WIN_FIELDS.map(|f| regs::win_reg(w, f)));
        }
        addrs.extend((0..ni.channels as u32).map(|c| regs::CH_PDID_BASE + 4 * c));
        addrs.extend([regs::CONTROL, regs::MBOX_CTRL, regs::IRQ_ENABLE]);
        if ni.trace_depth > 0 {
            addrs.push(trace::TRACE_CTRL);
        }
        for c in 0..ni.channels {
            let page = regs::ch_page(c);
            addrs.extend([regs::CH_PDID, regs::CH_ERR].map(|a| page + a));
            addrs.extend(
                (regs::DESC_LADDR_LO..=regs::DESC_CTRL)
                    .step_by(4)
                    .map(|a| page + a),
            );
            addrs.push(page + regs::PKT_DEST);
            addrs.extend(
                (0..ni.mailbox_msg_bytes as u32 / 4).map(|i| page + regs::PKT_DATA + 4 * i),
            );
        }
        let k = addrs.len() as u64;
        for addr in addrs {
            self.sw.push_back(Op::Read { addr, prot: true });
        }
        k
    }

    /// The set-up's writes to the windows software does not use (2 and
    /// up): non-zero base, size and PDID (`0x1_0000_0000 + 0x1000 (w + 1)`,
    /// the same size, PDID `pdid ^ w`), so that each holds a value a reset
    /// must clear ([`Node::reset_readback`]). Window 2 is enabled with its
    /// other PDID: a job's access to its range is rejected `Pdid`
    /// ([`PDID_WINDOW`]); the others are disabled (they accept nothing).
    pub(super) fn fill_windows(&mut self, ni: &NiParams, pdid: u32) {
        for w in 2..ni.windows {
            let v = 0x1000 * (w as u32 + 1);
            let ctrl = pdid ^ w as u32 | ((w == PDID_WINDOW) as u32) << 31;
            for (f, d) in WIN_FIELDS.into_iter().zip([v, 1, v, 1, ctrl]) {
                self.write(regs::win_reg(w, f), d, true, Meta::None);
            }
        }
    }

    /// A poll of a drain: now and then STATUS too, and the next register of
    /// [`Node::drain_regs`]'s round: a counter or a rejection counter
    /// (privileged), or a channel's CH_ERR (user) read and then cleared.
    pub(super) fn drain_poll(&mut self, ni: &NiParams) {
        self.polls += 1;
        if self.polls.is_multiple_of(STATUS_POLL) {
            self.sw.push_back(Op::Read {
                addr: regs::STATUS,
                prot: true,
            });
            let round = Self::drain_regs(ni);
            let (addr, prot) = round[(self.polls / STATUS_POLL) as usize % round.len()];
            self.sw.push_back(Op::Read { addr, prot });
            if !prot {
                // CH_ERR: any write clears it (the error of a refused
                // doorbell or send, read just before).
                self.write(addr, 0, false, Meta::None);
            }
        }
        self.poll();
    }

    /// The registers drains read in turn (address, privileged): every
    /// counter (CNT_BASE..), every rejection counter (REJ_BASE + 4 r), every
    /// channel's CH_ERR (user; cleared after the read).
    fn drain_regs(ni: &NiParams) -> Vec<(u32, bool)> {
        let mut v: Vec<(u32, bool)> = (0..regs::cnt::COUNT as u32)
            .map(|i| (regs::CNT_BASE + 4 * i, true))
            .collect();
        v.extend(
            RejectReason::ALL
                .iter()
                .map(|r| (regs::REJ_BASE + 4 * r.code() as u32, true)),
        );
        v.extend((0..ni.channels).map(|c| (regs::ch_page(c) + regs::CH_ERR, false)));
        v
    }

    /// A poll: the completion queue (unless held), the mailbox, and the
    /// error queue (ERRQ_COUNT, privileged) while a rejected packet's entry
    /// is due.
    pub(super) fn poll(&mut self) {
        if !self.errq_due.is_empty() && !self.hold_errq {
            self.sw.push_back(Op::Read {
                addr: regs::ERRQ_COUNT,
                prot: true,
            });
        }
        if !self.hold_cq {
            self.sw.push_back(Op::Read {
                addr: regs::CQ_PAGE + regs::CQ_W0,
                prot: false,
            });
        }
        self.sw.push_back(Op::Read {
            addr: regs::MB_PAGE + regs::MB_LEN,
            prot: false,
        });
    }
}
