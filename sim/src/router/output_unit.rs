//! Output side of the router: per (output port, VC) credit counters and the
//! busy bit (the VC is held by a packet between its head and tail), and the
//! output register of each port.

use super::flit::Flit;
use crate::topology::MAX_PORTS;

/// Credits, VC ownership and output registers of all output ports.
#[derive(Clone, Debug)]
pub struct OutputUnit {
    vcs: usize,
    max_credits: u16,
    /// Credits a head needs (max_packet_flits).
    head_credits: u16,
    credits: Vec<u16>,
    busy: [u32; MAX_PORTS],
    /// `ok[kind][port]`, bit w: a request of `kind` for (port, w) can be granted now.
    /// Kind 0: none (all clear); 1: a head (VC free, >= head_credits credits);
    /// 2: a body flit (a credit); 3: a drop (all set). A table so that the
    /// request loop has no data-dependent branch.
    ok: [[u32; MAX_PORTS]; 4],
    reg: [Flit; MAX_PORTS],
    reg_valid: u16,
}

impl OutputUnit {
    /// All VCs free, every credit counter at `credits` (the downstream buffer depth);
    /// a head needs `head_credits`.
    pub fn new(ports: usize, vcs: usize, credits: usize, head_credits: usize) -> Self {
        let all = ((1u64 << vcs) - 1) as u32;
        let head_all = if credits >= head_credits { all } else { 0 };
        OutputUnit {
            vcs,
            max_credits: credits as u16,
            head_credits: head_credits as u16,
            credits: vec![credits as u16; ports * vcs],
            busy: [0; MAX_PORTS],
            ok: [
                [0; MAX_PORTS],
                [head_all; MAX_PORTS],
                [if credits > 0 { all } else { 0 }; MAX_PORTS],
                [u32::MAX; MAX_PORTS],
            ],
            reg: [Flit::default(); MAX_PORTS],
            reg_valid: 0,
        }
    }

    /// Credits of (port, vc): free slots downstream not yet claimed.
    #[inline]
    pub fn credits(&self, port: usize, vc: usize) -> u16 {
        self.credits[port * self.vcs + vc]
    }

    /// 1 if a request of `kind` (see the `ok` field) for (port, vc) can be granted now, else 0.
    #[inline]
    pub fn ok(&self, kind: usize, port: usize, vc: usize) -> u32 {
        self.ok[kind][port] >> vc & 1
    }

    /// Bit w set if a request of `kind` for (port, w) can be granted now.
    #[inline]
    pub fn ok_mask(&self, kind: usize, port: usize) -> u32 {
        self.ok[kind][port]
    }

    #[inline]
    fn refresh(&mut self, port: usize, vc: usize) {
        let c = self.credits[port * self.vcs + vc];
        let bit = 1u32 << vc;
        let free = self.busy[port] & bit == 0;
        let head = if free && c >= self.head_credits {
            bit
        } else {
            0
        };
        self.ok[1][port] = (self.ok[1][port] & !bit) | head;
        self.ok[2][port] = (self.ok[2][port] & !bit) | if c > 0 { bit } else { 0 };
    }

    /// Whether output VC (port, vc) is held by a packet in progress.
    #[inline]
    pub fn busy(&self, port: usize, vc: usize) -> bool {
        self.busy[port] >> vc & 1 == 1
    }

    /// Send `f` (already carrying its output VC) on `port` at this edge:
    /// claim one credit and hold the VC from a non-tail head until the tail.
    #[inline]
    pub fn send(&mut self, port: usize, f: Flit) {
        let vc = f.vc as usize;
        let c = &mut self.credits[port * self.vcs + vc];
        debug_assert!(*c > 0, "send without credit on port {port} vc {vc}");
        *c -= 1;
        if f.head && !f.tail {
            self.busy[port] |= 1 << vc;
        } else if f.tail {
            self.busy[port] &= !(1 << vc);
        }
        self.refresh(port, vc);
        self.reg[port] = f;
        self.reg_valid |= 1 << port;
    }

    /// A credit returned for (port, vc); `false` if it would exceed the buffer depth.
    #[inline]
    pub fn credit(&mut self, port: usize, vc: usize) -> bool {
        if vc >= self.vcs {
            return false;
        }
        let c = &mut self.credits[port * self.vcs + vc];
        if *c >= self.max_credits {
            return false;
        }
        *c += 1;
        self.refresh(port, vc);
        true
    }

    /// Invalidate every output register (start of an edge).
    #[inline]
    pub fn clear_regs(&mut self) {
        self.reg_valid = 0;
    }

    /// The flit in `port`'s output register, if valid.
    #[inline]
    pub fn reg(&self, port: usize) -> Option<&Flit> {
        (self.reg_valid >> port & 1 == 1).then(|| &self.reg[port])
    }

    /// Bit mask of valid output registers.
    #[inline]
    pub fn reg_valid(&self) -> u16 {
        self.reg_valid
    }
}
