//! Software's consumption on a node of the `node-pair` bench: the head
//! completion (CQ_W0..W2, CQ_POP) and the head mailbox message (MB_LEN,
//! MB_SRC, MB_DATA, MB_POP), each checked against what the accepted
//! doorbells and sends made due, and seen exactly once; a read refused by
//! its server (READ_BUSY) is posted again; the head error-queue entry
//! (ERRQ_COUNT; when non-empty ERRQ_W0..W4, ERRQ_POP) of a packet the NI
//! rejected, each the entry due next.

use super::node::{Meta, Node, Op};
use super::NodePairBench;
use crate::cosim::Mismatch;
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::regs;

/// A user read of `addr`.
fn user_read(addr: u32) -> Op {
    Op::Read { addr, prot: false }
}

/// A user write of 1 to `addr` (a pop).
fn user_pop(addr: u32) -> Op {
    Op::Write {
        addr,
        data: 1,
        prot: false,
        meta: Meta::None,
    }
}

impl Node {
    /// A completion at the head of the queue (CQ_W0 = `w0`, non-zero):
    /// read CQ_W1 and CQ_W2 next, then pop it.
    fn read_completion(&mut self, w0: u32) {
        let cq = regs::CQ_PAGE;
        self.cq_words = vec![w0];
        self.sw.push_front(user_pop(cq + regs::CQ_POP));
        self.sw.push_front(user_read(cq + regs::CQ_W0 + 8));
        self.sw.push_front(user_read(cq + regs::CQ_W0 + 4));
    }

    /// An entry at the head of the error queue (ERRQ_COUNT = `count`,
    /// non-zero): read its five words next (privileged), then pop it.
    fn read_error_entry(&mut self) {
        self.errq_words.clear();
        self.sw.push_front(Op::Write {
            addr: regs::ERRQ_POP,
            data: 1,
            prot: true,
            meta: Meta::None,
        });
        for k in (0..5).rev() {
            self.sw.push_front(Op::Read {
                addr: regs::ERRQ_W0 + 4 * k,
                prot: true,
            });
        }
    }

    /// A message at the head of the mailbox (MB_LEN = `len`, non-zero):
    /// read MB_SRC and its words next, then pop it.
    fn read_message(&mut self, len: u32) {
        let mbp = regs::MB_PAGE;
        self.mb = Some((len, 0, Vec::new()));
        self.sw.push_front(user_pop(mbp + regs::MB_POP));
        for k in (0..len.div_ceil(4)).rev() {
            self.sw.push_front(user_read(mbp + regs::MB_DATA + 4 * k));
        }
        self.sw.push_front(user_read(mbp + regs::MB_SRC));
    }
}

impl NodePairBench {
    /// Software consumption: a completion-queue or mailbox read of node
    /// `i` returned `v`.
    pub(super) fn consume(&mut self, i: usize, addr: u32, v: u32, cycle: u64) -> Option<Mismatch> {
        let node = &mut self.nodes[i];
        let cq = regs::CQ_PAGE;
        let mbp = regs::MB_PAGE;
        if addr == cq + regs::CQ_W0 {
            if v != 0 {
                node.read_completion(v);
            }
        } else if addr == cq + regs::CQ_W0 + 4 {
            node.cq_words.push(v);
        } else if addr == cq + regs::CQ_W0 + 8 {
            node.cq_words.push(v);
            let w = std::mem::take(&mut node.cq_words);
            return self.completion_read(i, w, cycle);
        } else if addr == mbp + regs::MB_LEN {
            if v != 0 {
                node.read_message(v);
            }
        } else if addr == mbp + regs::MB_SRC {
            if let Some(m) = &mut node.mb {
                m.1 = v;
            }
        } else if (mbp + regs::MB_DATA..mbp + regs::PAGE).contains(&addr) {
            return self.message_word(i, v, cycle);
        } else if addr == regs::ERRQ_COUNT {
            if v != 0 {
                node.read_error_entry();
            }
        } else if (regs::ERRQ_W0..regs::ERRQ_W0 + 20).contains(&addr) {
            node.errq_words.push(v);
            if node.errq_words.len() == 5 {
                return self.error_entry_read(i, cycle);
            }
        }
        None
    }

    /// An error-queue entry read whole (ERRQ_W0..W4) on node `i`: it must
    /// be the oldest entry due (a packet rejected there, as the bench sent
    /// it), seen once.
    fn error_entry_read(&mut self, i: usize, cycle: u64) -> Option<Mismatch> {
        let node = &mut self.nodes[i];
        let w = std::mem::take(&mut node.errq_words);
        match node.errq_due.pop_front() {
            Some(e) if e[..] == w[..] => {
                self.cov.errq_entries += 1;
                None
            }
            e => Some(Mismatch {
                cycle,
                port: format!("n{i} error queue entry read (ERRQ_W0..W4)"),
                expected: match e {
                    Some(e) => format!("{e:08x?} (the oldest rejected packet's)"),
                    None => "no entry due".into(),
                },
                actual: format!("{w:08x?}"),
            }),
        }
    }

    /// A completion `w` (CQ_W0..W2) read whole on node `i`: a READ_BUSY
    /// refusal of one of its reads, or an outstanding completion, each
    /// seen once.
    fn completion_read(&mut self, i: usize, w: Vec<u32>, cycle: u64) -> Option<Mismatch> {
        // READ_DONE, REMOTE_DENIED, reason READ_BUSY: the server's read
        // queue was full; the read (still expected to complete) is
        // posted again.
        let txid = (w[0] >> 16 & 0x3FFF) as u16;
        if w[0] & 0xFFFF == 2 | 3 << 4 | (NACK_READ_BUSY as u32 & 0xF) << 8 {
            return self.read_busy(i, &w, txid, cycle);
        }
        let key = (i, w[0], w[1], w[2]);
        match self.exp_cq.get_mut(&key) {
            Some(c) => {
                *c -= 1;
                if *c == 0 {
                    self.exp_cq.remove(&key);
                }
                match w[0] & 15 {
                    1 => self.cov.write_in += 1,
                    4 => return self.ar_completed(i, txid, cycle),
                    // READ_DONE / REMOTE_DENIED: a read its server rejected.
                    2 if w[0] >> 4 & 0xF != 0 => {
                        self.cov.read_denied += 1;
                    }
                    2 => {
                        self.cov.read_done += 1;
                        self.nodes[i].reads.remove(&txid);
                    }
                    _ => self.cov.notify += 1,
                }
            }
            None => {
                return Some(Mismatch {
                    cycle,
                    port: format!("n{i} completion read (CQ_W0..W2)"),
                    expected: "an outstanding completion, each seen once".into(),
                    actual: format!("{:08x?} (unexpected or duplicate)", w),
                })
            }
        }
        None
    }

    /// READ_BUSY (completion `w`) for read `txid` of node `i`: it must be
    /// an outstanding read of this node from the server the completion
    /// names; the read is posted again.
    fn read_busy(&mut self, i: usize, w: &[u32], txid: u16, cycle: u64) -> Option<Mismatch> {
        let ok = (i, 2 | (txid as u32) << 16, w[1], w[2]);
        let server = self.nodes[i].reads.get(&txid).map(|d| d.server);
        let server = server.map(|k| self.nodes[k].me.to_bits());
        if !self.exp_cq.contains_key(&ok) || server != Some(w[1]) {
            return Some(Mismatch {
                cycle,
                port: format!("n{i} completion read (CQ_W0..W2)"),
                expected: "READ_BUSY only for an outstanding read of this node".into(),
                actual: format!("{:08x?}", w),
            });
        }
        let node = &mut self.nodes[i];
        let d = node.reads.remove(&txid).expect("an outstanding read");
        node.repost.push_back(d);
        self.cov.read_busy_seen += 1;
        None
    }

    /// A word of the head message read on node `i` (MB_DATA): once the
    /// message is read whole, it must be an outstanding one, from its
    /// source with its bytes, seen once.
    fn message_word(&mut self, i: usize, v: u32, cycle: u64) -> Option<Mismatch> {
        let node = &mut self.nodes[i];
        let (len, src, mut bytes) = node.mb.take()?;
        bytes.extend_from_slice(&v.to_le_bytes());
        if bytes.len() < len as usize {
            node.mb = Some((len, src, bytes));
            return None;
        }
        bytes.truncate(len as usize);
        let id = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        match self.exp_mb.remove(&(i, id)) {
            Some((s, b)) if s == src && b == bytes => self.cov.messages += 1,
            e => {
                return Some(Mismatch {
                    cycle,
                    port: format!("n{i} mailbox message read (MB_SRC, MB_DATA)"),
                    expected: match e {
                        Some((s, b)) => format!("src 0x{s:06x} bytes {b:02x?}"),
                        None => "an outstanding message, each seen once".into(),
                    },
                    actual: format!("src 0x{src:06x} bytes {bytes:02x?}"),
                })
            }
        }
        None
    }
}
