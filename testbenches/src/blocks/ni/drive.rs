//! What the `ni` bench's agents put on the NI's inputs each cycle (clock
//! low), phase by phase: the end of a drained phase, the reset pulse, the
//! software, the memory, the receive agent's flits, the router port's
//! credits.

use super::agents::Access;
use super::rx::SentPacket;
use super::{NiBench, Op, Ports};
use exanet_sim::ni::{regs, Packet};
use exanet_sim::rng::Rng;

impl NiBench {
    /// One cycle's inputs (see the module doc); the random draws in a
    /// fixed order.
    pub(super) fn drive_cycle(&mut self, rng: &mut Rng) {
        // Moved out and back (no per-cycle clone of the port handles).
        let p = self.ports.take().expect("bind() before running");
        self.drive_cycle_on(&p, rng);
        self.ports.get_or_insert(p);
    }

    /// [`Self::drive_cycle`] on the bound ports `p`.
    fn drive_cycle_on(&mut self, p: &Ports, rng: &mut Rng) {
        self.cycle_in_phase += 1;
        if !self.reset_now && self.draining && self.idle() {
            self.end_drained_phase();
        }
        if self.reset_now {
            self.drive_reset(p);
            return;
        }
        p.reset.set(0);
        self.drive_software(p, rng);
        // Memory.
        self.mem_r.drive(&p.ni, rng, self.cycle_in_phase, &self.mem);
        // Receive agent: flits into the NI (a packet starts only with the
        // credits of a largest packet), and the memory's write slave.
        self.send_early_ack(rng);
        self.make_next_packet(rng);
        self.start_next_packet();
        self.drive_flit(p, rng);
        self.rx.wr.drive(&p.ni, rng, self.cycle_in_phase);
        self.drive_credits(p, rng);
    }

    /// A drained phase ends: every second with a reset pulse; the others
    /// go on with the same state (acknowledgements free the slots).
    fn end_drained_phase(&mut self) {
        // First, software reads the event trace ring (compared read by read).
        if self.params.ni.trace_depth > 0 && !self.trace_read {
            self.trace_read = true;
            self.queue_trace_readout();
            return;
        }
        // Before a reset pulse, software writes every register the
        // read-back after it reads (random values), so a register the
        // reset leaves alone shows.
        // (At an engine point only with `reset_readback=1`: the
        // `allreduce_*` tests' fixed-seed coverage floors hold on the
        // stimulus without them.)
        if self.phase_ends_with_reset(self.phases + 1)
            && !self.reset_fill
            && self.reads_back_resets()
        {
            self.reset_fill = true;
            self.queue_reset_fill(&mut Rng::new(self.cov.flits ^ self.phases));
            return;
        }
        self.phases += 1;
        if self.phase_ends_with_reset(self.phases) {
            self.reset_now = true;
        } else {
            self.cov.phases_no_reset += 1;
            self.start_phase();
        }
    }

    /// The `n`-th phase (from 1) ends with a reset pulse: every second
    /// one; with `reset_readback=1` at an engine point the odd ones, from
    /// the first (its phases are long, and a campaign's 30,000 cycles hold
    /// two or three: the first reset, and its read-back, then comes within
    /// the first 10,000 or so).
    fn phase_ends_with_reset(&self, n: u64) -> bool {
        let first = self.has_engine() && self.ar_stim.reset_readback != 0;
        (n + first as u64).is_multiple_of(2)
    }

    /// A new phase: length, loads, privileged set-up.
    pub(super) fn start_phase(&mut self) {
        self.draining = false;
        self.trace_read = false;
        self.reset_fill = false;
        self.cycle_in_phase = 0;
        let mut rng = Rng::new(
            (self.cov.resets + 16 * self.cov.phases_no_reset).wrapping_mul(0x9E37_79B9)
                ^ self.cov.flits,
        );
        self.phase_len = if self.burst.is_some() {
            u64::MAX
        } else {
            1000 + rng.below(8000)
        };
        self.load = [0.9, 0.5, 0.2, 0.05][rng.below(4) as usize];
        self.tx_off = false;
        self.rx.load = if self.only_bad {
            0.6
        } else if self.burst.is_some() {
            0.5
        } else {
            [0.5, 0.2, 0.05][rng.below(3) as usize]
        };
        self.setup(&mut rng);
    }

    /// The reset pulse: reset high, nothing valid, nothing ready.
    fn drive_reset(&mut self, p: &Ports) {
        p.reset.set(1);
        p.credit_in_valid.set(0);
        p.in_valid.set(0);
        self.axil.drive_reset(&p.ni);
        self.mem_r.drive_reset(&p.ni);
        self.rx.wr.drive_reset(&p.ni);
        self.rx.flit_now = false;
        self.credit_now = None;
    }

    /// Software: polls the completion queue while a completion's write is
    /// landing, pops when the receive path stays Busy, else a new random
    /// action (or the drain) when nothing is queued; the next access or
    /// wait; the AXI4-Lite master's signals.
    fn drive_software(&mut self, p: &Ports, rng: &mut Rng) {
        // A completion's write is on its way: software polls the queue
        // (the entry must not be visible before the write's B).
        if std::mem::take(&mut self.rx.poll_landing) && self.sw.is_empty() && rng.chance(0.5) {
            let a = [regs::CQ_COUNT, regs::CQ_W0][rng.below(2) as usize];
            self.sw.push_back(Op::Read {
                addr: regs::CQ_PAGE + a,
                prot: false,
            });
        }
        // A collective is about to time out: software polls the queue back
        // to back, ahead of anything else (its TIMEOUT completion must
        // appear in the golden model's cycle, not one later).
        let count = regs::CQ_PAGE + regs::CQ_COUNT;
        if self
            .golden
            .engine()
            .and_then(|e| e.cycles_to_timeout())
            .is_some_and(|c| c <= 4)
            && !matches!(self.sw.front(), Some(Op::Read { addr, .. }) if *addr == count)
        {
            self.sw.push_front(Op::Read {
                addr: count,
                prot: false,
            });
            self.wait = 0;
            self.cov.ar_timeout_polls += 1;
        }
        if self.axil.free() && self.wait == 0 {
            if self.sw.is_empty() && self.burst.is_none() && self.rx.busy_run > 100 {
                // The receive path waits for a queue: software pops.
                self.rx.busy_run = 0;
                self.user_write(regs::CQ_PAGE + regs::CQ_POP, 0);
                self.user_write(regs::MB_PAGE + regs::MB_POP, 0);
            } else if self.sw.is_empty() && !self.draining {
                if self.cycle_in_phase > self.phase_len {
                    self.draining = true;
                } else if rng.chance(self.load) {
                    self.generate(rng);
                }
            }
            match self.sw.pop_front() {
                Some(Op::Wait(n)) => self.wait = n,
                Some(Op::Write { addr, data, prot }) => self.axil.start(Access::Write {
                    addr,
                    data,
                    prot,
                    meta: (),
                }),
                Some(Op::Read { addr, prot }) => self.axil.start(Access::Read { addr, prot }),
                None => {}
            }
        }
        if self.wait > 0 {
            self.wait -= 1;
        }
        self.axil.drive(&p.ni, rng);
    }

    /// Half the messages picked: a forged acknowledgement of it, sent as
    /// soon as the port is free (no other packet starts meanwhile) while
    /// the message is still being sent; it may be decided before its tail
    /// leaves (Stale), or after.
    fn send_early_ack(&mut self, rng: &mut Rng) {
        let Some(key) = self.rx.early else {
            return;
        };
        if !self.rx.sending_msgs.contains(&key) || !std::mem::take(&mut self.rx.early_go) {
            self.rx.early = None;
        } else if self.rx.may_start(1) {
            // (Before a packet waiting for class-0 credits: the port
            // is free.)
            self.rx.early = None;
            let words = self.early_ack(rng, key);
            let vc = self.rx.vc_of(1, rng);
            self.rx.sending = Some((words, 0, vc));
        } else {
            self.rx.early_go = true;
        }
    }

    /// With the port free and no packet waiting, at the receive load: the
    /// next packet (a burst message, or a general one; while draining,
    /// only acknowledgements of the NI's messages, one at a time, until
    /// none is outstanding) on a random VC of its class.
    fn make_next_packet(&mut self, rng: &mut Rng) {
        if self.rx.early.is_none()
            && self.rx.sending.is_none()
            && self.rx.next.is_none()
            && rng.chance(self.rx.load)
        {
            let made = if self.burst.is_some() {
                // After the set-up (MBOX_CTRL) has been written.
                if self.cycle_in_phase > 200 {
                    self.burst_packet(rng).map(|w| (w, 0))
                } else {
                    None
                }
            } else if !self.draining || (!self.rx.outstanding.is_empty() && self.rx.none_sent()) {
                Some(self.rx_packet(rng))
            } else {
                None
            };
            if let Some((words, class)) = made {
                let vc = self.rx.vc_of(class, rng);
                self.rx.next = Some((words, vc));
            }
        }
    }

    /// The next packet starts once its class's pool holds a largest
    /// packet.
    fn start_next_packet(&mut self) {
        if let Some((_, vc)) = &self.rx.next {
            if self.rx.may_start(self.rx.class_of(*vc as u64)) {
                let (words, vc) = self.rx.next.take().expect("next");
                self.rx.sending = Some((words, 0, vc));
            }
        }
    }

    /// The packet being sent: its next flit when its class has a credit
    /// (and at random; random data when no flit); at its tail it awaits
    /// its decision.
    fn drive_flit(&mut self, p: &Ports, rng: &mut Rng) {
        self.rx.flit_now = false;
        p.in_valid.set(0);
        p.in_data.set_u128(rng.next_u128());
        if let Some((words, i, vc)) = &mut self.rx.sending {
            let c = *vc as usize / self.rx.vcs;
            if self.rx.credits[c] > 0 && rng.chance(0.8) {
                p.in_valid.set(1);
                p.in_data.set_u128(words[*i]);
                p.in_head.set((*i == 0) as u64);
                p.in_tail.set((*i + 1 == words.len()) as u64);
                p.in_vc.set(*vc as u64);
                self.rx.flit_now = true;
                self.rx.credits[c] -= 1;
                *i += 1;
                if *i == words.len() {
                    let (words, _, vc) = self.rx.sending.take().expect("sending");
                    let seq = self.rx.arrivals;
                    self.rx.arrivals += 1;
                    self.rx.sent[c].push_back(SentPacket {
                        pkt: Packet { words },
                        vc,
                        seq,
                    });
                }
            }
        }
    }

    /// Credits back from the router, on `vc` or `resp_vc` (a lane holding
    /// flits, at random), and stray ones on other VCs.
    fn drive_credits(&mut self, p: &Ports, rng: &mut Rng) {
        let vcs = [self.params.vc as u64, self.params.resp_vc as u64];
        let lane = match self.held.map(|h| h > 0) {
            [true, true] => Some(rng.below(2) as usize),
            [true, false] => Some(0),
            [false, true] => Some(1),
            [false, false] => None,
        };
        self.credit_now = lane.filter(|_| rng.chance(0.35));
        if let Some(l) = self.credit_now {
            p.credit_in_valid.set(1);
            p.credit_in_vc.set(vcs[l]);
        } else if rng.chance(0.02) {
            let others: Vec<u64> = (0..16).filter(|v| !vcs.contains(v)).collect();
            p.credit_in_valid.set(1);
            p.credit_in_vc
                .set(others[rng.below(others.len() as u64) as usize]);
        } else {
            p.credit_in_valid.set(0);
        }
    }
}
