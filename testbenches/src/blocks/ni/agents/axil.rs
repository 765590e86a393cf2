//! [`AxilMaster`]: the software, one AXI4-Lite access at a time with
//! random valid/ready delays, every response checked against the golden
//! model's.

use super::{NiPorts, Report};
use crate::cosim::Mismatch;
use exanet_sim::ni::{AxilResp, Ni, Prot};
use exanet_sim::rng::Rng;
use std::collections::VecDeque;
use std::fmt;

/// One software access; `meta` is what the bench remembers about a write
/// (`()` when nothing).
#[derive(Clone, Debug)]
pub(crate) enum Access<M> {
    Write {
        addr: u32,
        data: u32,
        prot: bool,
        meta: M,
    },
    Read {
        addr: u32,
        prot: bool,
    },
}

/// BRESP / RRESP `actual` of the `kind` (`write`, `read`) access to `addr`
/// against the golden response `resp` (OKAY 0, SLVERR 2).
fn check_resp(
    r: Report,
    port: &str,
    kind: &str,
    addr: u32,
    resp: AxilResp,
    actual: u64,
) -> Result<(), Mismatch> {
    let code = if resp == AxilResp::Okay { 0 } else { 2 };
    if actual != code {
        return r.bad(
            &format!("{port} ({kind} 0x{addr:05x})"),
            format!("{code}"),
            format!("{actual}"),
        );
    }
    Ok(())
}

/// The software: an AXI4-Lite master presenting one access at a time
/// (valid after a random delay), with random BREADY / RREADY. The golden
/// model performs each access when the RTL accepts it (with an
/// interconnect in front, [`NiPorts::inner`]: when the NI behind it
/// accepts it); the responses are compared in order.
///
/// The port can be lent to another master while the agent is idle
/// ([`AxilMaster::lend`]): the agent then neither drives nor checks it.
pub(crate) struct AxilMaster<M> {
    cur: Option<Access<M>>,
    presented: bool,
    /// Accepted by the interconnect, not yet by the NI (in order).
    issued: VecDeque<Access<M>>,
    /// The write the NI accepted this cycle (inner mode).
    inner_write: Option<Access<M>>,
    lent: bool,
    pend_b: VecDeque<(u32, AxilResp)>,
    pend_r: VecDeque<(u32, u32, AxilResp)>,
    bready: bool,
    rready: bool,
    /// A read performed on the golden model at the last edge of the NI's
    /// clock (address `.0`): the golden `irq()` then, which the registered
    /// `irq` output shows at the next edge of that clock (the next call of
    /// [`AxilMaster::accept_read`]; not the next value of the bench's
    /// cycle count, which in a bench of several clocks is another clock's).
    irq_due: Option<(u32, bool)>,
}

impl<M: fmt::Debug> AxilMaster<M> {
    pub fn new() -> Self {
        AxilMaster {
            cur: None,
            presented: false,
            issued: VecDeque::new(),
            inner_write: None,
            lent: false,
            pend_b: VecDeque::new(),
            pend_r: VecDeque::new(),
            bready: false,
            rready: false,
            irq_due: None,
        }
    }

    /// The access presented or about to be (not yet accepted).
    pub fn current(&self) -> Option<&Access<M>> {
        self.cur.as_ref()
    }

    /// Nothing but reads in flight or presented (no write awaiting its
    /// acceptance or its B).
    pub fn only_reads(&self) -> bool {
        let read = |a: &Access<M>| matches!(a, Access::Read { .. });
        self.cur.as_ref().is_none_or(read)
            && self.issued.iter().all(read)
            && self.inner_write.is_none()
            && self.pend_b.is_empty()
    }

    /// No access presented.
    pub fn free(&self) -> bool {
        self.cur.is_none()
    }

    /// No access presented or awaiting its response.
    pub fn idle(&self) -> bool {
        self.cur.is_none()
            && self.issued.is_empty()
            && self.pend_b.is_empty()
            && self.pend_r.is_empty()
    }

    /// Lend the port to another master (`true`, only while
    /// [`AxilMaster::idle`]: refused otherwise) or take it back (`false`).
    /// Returns whether the port is lent now.
    pub fn lend(&mut self, on: bool) -> bool {
        self.lent = on && (self.lent || self.idle());
        self.lent
    }

    /// The port is lent ([`AxilMaster::lend`]).
    pub fn lent(&self) -> bool {
        self.lent
    }

    /// Present `access` from the next cycle on (after a random delay).
    pub fn start(&mut self, access: Access<M>) {
        self.cur = Some(access);
        self.presented = false;
    }

    /// During a reset pulse: nothing valid, nothing ready.
    pub fn drive_reset(&mut self, p: &NiPorts) {
        for q in [&p.awvalid, &p.wvalid, &p.arvalid, &p.bready, &p.rready] {
            q.set(0);
        }
        self.bready = false;
        self.rready = false;
        // A reset clears `irq`: nothing due from a read before it.
        self.irq_due = None;
    }

    /// Clock low: present the current access (or not yet), draw the ready
    /// signals.
    pub fn drive(&mut self, p: &NiPorts, rng: &mut Rng) {
        if self.lent {
            return;
        }
        p.awvalid.set(0);
        p.wvalid.set(0);
        p.arvalid.set(0);
        if let Some(op) = &self.cur {
            if !self.presented && rng.chance(0.7) {
                self.presented = true;
            }
            if self.presented {
                match op {
                    Access::Write {
                        addr, data, prot, ..
                    } => {
                        p.awvalid.set(1);
                        p.wvalid.set(1);
                        p.awaddr.set(*addr as u64);
                        p.wdata.set(*data as u64);
                        p.awprot.set(*prot as u64);
                    }
                    Access::Read { addr, prot } => {
                        p.arvalid.set(1);
                        p.araddr.set(*addr as u64);
                        p.arprot.set(*prot as u64);
                    }
                }
            }
        }
        self.bready = rng.chance(0.7);
        self.rready = rng.chance(0.7);
        p.bready.set(self.bready as u64);
        p.rready.set(self.rready as u64);
    }

    /// Checks of the accept handshakes: AWREADY = WREADY, nothing accepted
    /// unless presented; a read accepted is performed on `golden` now.
    /// Returns whether a write was accepted (the bench then performs it,
    /// in its place in the order of golden calls: [`AxilMaster::take_write`]).
    pub fn accept_read(
        &mut self,
        p: &NiPorts,
        golden: &mut Ni,
        r: Report,
    ) -> Result<bool, Mismatch> {
        self.check_irq(p, r)?;
        if self.lent {
            return Ok(false);
        }
        if let Some(inner) = &p.inner {
            return self.accept_inner(p, inner, golden, r);
        }
        let presented = self.cur.is_some() && self.presented;
        let rd_fire = p.arready.get() == 1;
        let wr_fire = p.awready.get() == 1;
        if p.wready.get() != p.awready.get() {
            return r.bad(
                "s_wready",
                format!("{}", p.awready.get()),
                format!("{}", p.wready.get()),
            );
        }
        if (rd_fire || wr_fire) && !presented {
            return r.bad(
                "s_arready/s_awready",
                "0 (nothing presented)".into(),
                "1".into(),
            );
        }
        if rd_fire {
            match self.cur.take() {
                Some(Access::Read { addr, prot }) => {
                    let pr = if prot { Prot::Privileged } else { Prot::User };
                    let (v, resp) = golden.axil_read_prot(addr, pr);
                    self.pend_r.push_back((addr, v, resp));
                    self.irq_due = Some((addr, golden.irq()));
                }
                other => {
                    return r.bad(
                        "s_arready",
                        "0 (a write is presented)".into(),
                        format!("1 ({other:?})"),
                    )
                }
            }
        }
        Ok(wr_fire)
    }

    /// The interrupt at the edge after a read (this call: one a clock
    /// edge of the NI): the golden model's `irq()` at the read (its state
    /// is the RTL's at the start of that cycle, as the read's data shows).
    /// Counted in edges of the NI's own clock: in the whole-node bench the
    /// bench's cycle count is node 0's PL clock, and node 1's edge after
    /// the read may come at the same count (node 1 faster for a while) or
    /// two later (slower); comparing at "count + 1" compared node 1's
    /// `irq` one edge late in the first case (a completion posted at the
    /// edge between: expected 0, RTL 1) and skipped the check in the
    /// second.
    fn check_irq(&mut self, p: &NiPorts, r: Report) -> Result<(), Mismatch> {
        if let Some((addr, want)) = self.irq_due.take() {
            if p.irq.get() != want as u64 {
                return r.bad(
                    &format!("irq (the cycle after the read of 0x{addr:05x})"),
                    format!("{}", want as u8),
                    format!("{}", p.irq.get()),
                );
            }
        }
        Ok(())
    }

    /// [`AxilMaster::accept_read`] with an interconnect in front: an
    /// access leaves the agent at its handshake on the outer port (valid
    /// and ready: an interconnect may be ready with nothing presented) and
    /// is performed at the NI's own handshake, in order.
    fn accept_inner(
        &mut self,
        p: &NiPorts,
        inner: &super::InnerAxil,
        golden: &mut Ni,
        r: Report,
    ) -> Result<bool, Mismatch> {
        let presented = self.cur.is_some() && self.presented;
        let out_rd = presented && p.arvalid.get() == 1 && p.arready.get() == 1;
        let out_wr = presented
            && p.awvalid.get() == 1
            && p.awready.get() == 1
            && p.wvalid.get() == 1
            && p.wready.get() == 1;
        if out_rd || out_wr {
            if let Some(op) = self.cur.take() {
                self.issued.push_back(op);
            }
        }
        let in_rd = inner.arvalid.get() == 1 && inner.arready.get() == 1;
        let in_wr = inner.awvalid.get() == 1 && inner.awready.get() == 1;
        if in_rd {
            let k = self
                .issued
                .iter()
                .position(|a| matches!(a, Access::Read { .. }));
            match k.and_then(|k| self.issued.remove(k)) {
                Some(Access::Read { addr, prot }) => {
                    let pr = if prot { Prot::Privileged } else { Prot::User };
                    let (v, resp) = golden.axil_read_prot(addr, pr);
                    self.pend_r.push_back((addr, v, resp));
                    self.irq_due = Some((addr, golden.irq()));
                }
                _ => {
                    return r.bad(
                        "obs_ni_s_arvalid",
                        "0 (no read sent by software)".into(),
                        "1".into(),
                    )
                }
            }
        }
        if in_wr {
            let k = self
                .issued
                .iter()
                .position(|a| matches!(a, Access::Write { .. }));
            match k.and_then(|k| self.issued.remove(k)) {
                Some(w) => self.inner_write = Some(w),
                None => {
                    return r.bad(
                        "obs_ni_s_awvalid",
                        "0 (no write sent by software)".into(),
                        "1".into(),
                    )
                }
            }
        }
        Ok(in_wr)
    }

    /// The write accepted this cycle: address, data, privileged, meta. The
    /// bench performs it on the golden model and calls
    /// [`AxilMaster::wrote`].
    pub fn take_write(&mut self, r: Report) -> Result<(u32, u32, bool, M), Mismatch> {
        let w = self.inner_write.take().or_else(|| self.cur.take());
        match w {
            Some(Access::Write {
                addr,
                data,
                prot,
                meta,
            }) => Ok((addr, data, prot, meta)),
            other => r.bad(
                "s_awready",
                "0 (a read is presented)".into(),
                format!("1 ({other:?})"),
            ),
        }
    }

    /// The golden model answered the accepted write `addr` with `resp`.
    pub fn wrote(&mut self, addr: u32, resp: AxilResp) {
        self.pend_b.push_back((addr, resp));
    }

    /// A write response taken this cycle: checked against the golden
    /// model's; returns the write's address and response.
    pub fn response_b(
        &mut self,
        p: &NiPorts,
        r: Report,
    ) -> Result<Option<(u32, AxilResp)>, Mismatch> {
        if self.lent || !(p.bvalid.get() == 1 && self.bready) {
            return Ok(None);
        }
        let Some((addr, resp)) = self.pend_b.pop_front() else {
            return r.bad("s_bvalid", "0".into(), "1".into());
        };
        check_resp(r, "s_bresp", "write", addr, resp, p.bresp.get())?;
        Ok(Some((addr, resp)))
    }

    /// A read response taken this cycle: response and data checked against
    /// the golden model's; returns the read's address, value and response.
    pub fn response_r(
        &mut self,
        p: &NiPorts,
        r: Report,
    ) -> Result<Option<(u32, u32, AxilResp)>, Mismatch> {
        if self.lent || !(p.rvalid.get() == 1 && self.rready) {
            return Ok(None);
        }
        let Some((addr, v, resp)) = self.pend_r.pop_front() else {
            return r.bad("s_rvalid", "0".into(), "1".into());
        };
        check_resp(r, "s_rresp", "read", addr, resp, p.rresp.get())?;
        if p.rdata.get() != v as u64 {
            return r.hex(
                &format!("s_rdata (read 0x{addr:05x})"),
                v as u64,
                p.rdata.get(),
            );
        }
        Ok(Some((addr, v, resp)))
    }
}
