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
    credits: Vec<u16>,
    busy: [u32; MAX_PORTS],
    reg: [Flit; MAX_PORTS],
    reg_valid: u16,
}

impl OutputUnit {
    /// All VCs free, every credit counter at `credits` (the downstream buffer depth).
    pub fn new(ports: usize, vcs: usize, credits: usize) -> Self {
        OutputUnit {
            vcs,
            max_credits: credits as u16,
            credits: vec![credits as u16; ports * vcs],
            busy: [0; MAX_PORTS],
            reg: [Flit::default(); MAX_PORTS],
            reg_valid: 0,
        }
    }

    /// Credits of (port, vc): free slots downstream not yet claimed.
    #[inline]
    pub fn credits(&self, port: usize, vc: usize) -> u16 {
        self.credits[port * self.vcs + vc]
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
