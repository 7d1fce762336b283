"""What the captures show: each queue manager's configuration (DISPLAY QMGR, CLUSQMGR, QCLUSTER, QLOCAL, ...)
and channel status at a capture instant, from the configuration in force and the simulation's channel runtime,
written as runmqsc, MQ REST JSON or CSQUTIL output; and the broken captures injected (truncated, unbalanced, a
capture that failed). A part of ``landing.Generator``."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import clwl.generate.render as R
import clwl.generate.render_zos as RZ
from clwl.generate.estate import BASE_CAPTURE_MIN, DISCINT, FR_NAMES, at_min

BROKEN_KINDS = ("truncated", "unbalanced", "bad_hex", "not_mqsc", "short_token")
BROKEN_REASONS = {
    "truncated": "record truncated at end of file",
    "unbalanced": "unbalanced parenthesis",
    "bad_hex": "bad hex in accounting_token",
    "short_token": "accounting_token is not 32 bytes",
    "not_mqsc": "not runmqsc output",
}


class CaptureWriter:
    """The captures of ``landing.Generator`` (it holds the estate, the configuration in force and the day's
    sending queue managers, ``self.sd``)."""

    # -- channel runtime ----------------------------------------------------------------------------
    def channel_state(self, frm: str, to: str, channel: str, t: datetime) -> tuple[str, dict]:
        """State of frm's cluster-sender channel to ``to`` at t, and what DISPLAY CHSTATUS needs."""
        est, cfg = self.est, self.cfg
        day0 = datetime(t.year, t.month, t.day) + timedelta(minutes=5 * 60)
        roles = est.qmgrs[frm].role, est.qmgrs[to].role
        if frm in self.sd and to in cfg.retrying:
            return "RETRYING", {"since": cfg.retrying_since[to]}
        if (frm, to) in cfg.partitioned:
            return "RETRYING", {"since": cfg.partitioned_since[(frm, to)]}
        pair = {frm, to}
        if pair == {"FR1", "FR2"} or ("FR1" in pair and "sender" in roles):
            start = day0 + timedelta(seconds=31 + est.qmgrs[frm].index * 3 + est.qmgrs[to].index % 20)
            if t < start:
                return "INACTIVE", {}
            minutes = int((t - start).total_seconds() // 60)
            msgs = 2 + minutes // 45
            last = start + timedelta(minutes=45 * (msgs - 2)) if msgs > 2 else start
            return "RUNNING", {"start": start, "msgs": msgs, "bytes": msgs * 2316, "last": last}
        if roles[1] == "repos" and roles[0] == "backend":
            recent = [e for e in cfg.admin_changes.get(frm, []) if e <= t and (t - e).total_seconds() <= DISCINT]
            if recent:
                start = max(recent) + timedelta(seconds=1 + FR_NAMES.index(to))
                if start <= t:
                    return "RUNNING", {"start": start, "msgs": 2, "bytes": 2 * 2316, "last": start}
            return "INACTIVE", {}
        sd = self.sd.get(frm)
        if sd is None:
            return "INACTIVE", {}
        key = next((d.key for d in sd.router.dests if d.channel == channel), None)
        if key is None or sd.last_ms[key] < 0:
            return "INACTIVE", {}
        base = datetime(t.year, t.month, t.day)
        t_ms = int((t - base).total_seconds() * 1000)
        if t_ms - sd.last_ms[key] > DISCINT * 1000:
            return "INACTIVE", {}
        ms = lambda v: base + timedelta(milliseconds=v)  # noqa: E731
        return "RUNNING", {"start": ms(sd.inst_start[key]), "msgs": sd.inst_msgs[key],
                           "bytes": sd.inst_bytes[key], "last": ms(sd.last_ms[key]),
                           "before": sd.sent_today[key] - sd.inst_msgs[key]}

    def held_on(self, frm: str, xmitq: str | None = None, to: str | None = None) -> int:
        sd = self.sd.get(frm)
        if sd is None or (sd.held is None and not sd.waiting):
            return 0
        n = 0
        if sd.held is not None:
            for (k, _qi, _p), c in sd.held.counts.items():
                d = sd.router.dests[k]
                if (xmitq is None or sd.xmitq[k] == xmitq) and (to is None or d.qmgr == to):
                    n += c[0]
        for k, ws in sd.waiting.items():  # behind a channel of a partition
            d = sd.router.dests[k]
            if (xmitq is None or sd.xmitq[k] == xmitq) and (to is None or d.qmgr == to):
                n += len(ws)
        return n

    # -- captures ---------------------------------------------------------------------------------
    def config_cmds(self, qm: str, t: datetime, extra_unknown=None) -> list[R.Cmd]:
        est, cfg = self.est, self.cfg
        me = est.qmgrs[qm]
        clus = []
        for other in est.knows[qm]:
            oq = est.qmgrs[other]
            for chl, cl in est.channels_of(other):
                if cl not in me.clusters:
                    continue
                status = "RUNNING" if other == qm else self.channel_state(qm, other, chl, t)[0]
                clus.append(R.clusqmgr_rec(me, oq, chl, cl, R.ClusqmgrState(
                    weight=cfg.weight[other], prty=cfg.chl_prty[other],
                    altered=cfg.chl_altered[other], learnt=cfg.clus_learnt[other], status=status,
                    suspended=other in cfg.suspended, xmitq="" if other == qm else est.xmitq_for(qm, chl))))
        if me.repos or me.role == "sender":
            insts = [i for i in est.instances if i.host in est.knows[qm]]
        else:
            insts = [i for i in est.instances if i.host == qm]
        insts = sorted(insts, key=lambda i: (i.queue, i.host))
        qc = [R.qcluster_rec(i.queue, est.qmgrs[i.host], i.cluster, R.QclusterState(
                  altered=cfg.q_altered[(i.queue, i.host)], learnt=cfg.clus_learnt[i.host],
                  put=cfg.put_enabled(i.queue, i.host), prty=cfg.q_prty[(i.queue, i.host)],
                  descr=est.queue(i.queue).descr, persistent=est.queue(i.queue).persistent_share >= 0.5))
              for i in insts]
        clusters = list(me.clusters)
        return [
            R.Cmd("DISPLAY QMGR ALL", [R.qmgr_rec(me, clusters)]),
            R.Cmd("DISPLAY CLUSQMGR(*) ALL", clus),
            R.Cmd("DISPLAY QCLUSTER(*) ALL", qc),
            R.Cmd("DISPLAY QLOCAL(*) ALL", self.qlocals(qm, t)),
            R.Cmd("DISPLAY QALIAS(*) ALL", R.qalias_recs(me)),
            R.Cmd("DISPLAY QREMOTE(*) ALL", R.qremote_recs(me)),
        ]

    def qlocals(self, qm: str, t: datetime) -> list[R.Rec]:
        est, cfg = self.est, self.cfg
        me = est.qmgrs[qm]
        business = 6 <= t.hour < 22
        sys_q = R.system_qlocals(len(est.knows[qm]) + 3)
        app: dict[str, dict] = {}
        for i in est.instances:
            if i.host != qm:
                continue
            q = est.queue(i.queue)
            enabled = cfg.put_enabled(i.queue, qm)
            app[i.queue] = dict(
                created=i.created, altered=cfg.q_altered[(i.queue, qm)], cluster=i.cluster, defbind="NOTFIXED",
                defpsist="YES" if q.persistent_share >= 0.5 else "NO", descr=q.descr, maxdepth="50000", acctq="ON",
                clwluseq=i.clwluseq, clwlprty=cfg.q_prty[(i.queue, qm)], put="ENABLED" if enabled else "DISABLED",
                ipprocs=2 if enabled else 0, opprocs=1 if business and me.role == "sender" else 0,
                boqname=f"{i.queue}.BACKOUT", bothresh="5")
            app[f"{i.queue}.BACKOUT"] = R.backout_qlocal(i.queue, i.created)
        for name, pat in me.manual_xmitqs:
            app[name] = R.manual_xmitq_qlocal(pat, me.created + timedelta(days=30))
        if me.defclxq == "CHANNEL":
            for other in est.knows[qm]:
                if other != qm:
                    for chl, cl in est.channels_of(other):
                        if cl in me.clusters:
                            app[f"SYSTEM.CLUSTER.TRANSMIT.{chl}"] = R.channel_xmitq_qlocal(
                                me.created + timedelta(minutes=20))
        merged = {**sys_q, **app}
        recs = []
        for name in sorted(merged):
            o = dict(merged[name])
            if o.get("usage") == "XMITQ":
                o["curdepth"] = self.held_on(qm, xmitq=name)
                users = 0
                for other in est.knows[qm]:
                    if other == qm:
                        continue
                    for chl, cl in est.channels_of(other):
                        if cl in me.clusters and est.xmitq_for(qm, chl) == name \
                                and self.channel_state(qm, other, chl, t)[0] == "RUNNING":
                            users += 1
                o["ipprocs"] = users
                o["opprocs"] = 1 if business and me.role == "sender" and users else 0
            recs.append(R.qlocal_rec(me, name, **o))
        return recs

    def chstatus_cmd(self, qm: str, t: datetime) -> R.Cmd:
        est = self.est
        me = est.qmgrs[qm]
        rows = []
        for other in est.knows[qm]:
            if other == qm:
                continue
            for chl, cl in est.channels_of(other):
                if cl not in me.clusters:
                    continue
                st, info = self.channel_state(qm, other, chl, t)
                if st != "INACTIVE":
                    rows.append((chl, "CLUSSDR", other, st, info))
        for frm in sorted(est.qmgrs):
            if frm == qm or qm not in est.knows[frm]:
                continue
            for chl, cl in est.channels_of(qm):
                if cl not in est.qmgrs[frm].clusters:
                    continue
                st, info = self.channel_state(frm, qm, chl, t)
                if st == "RUNNING":
                    rows.append((chl, "CLUSRCVR", frm, st, info))
        recs = []
        for chl, typ, peer, st, info in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
            seed = int(R.hexid(f"{qm}/{chl}/{peer}/{t.date()}", 6), 16) % 400000
            seqbase = 1000 + seed + info.get("before", 0)
            if st == "RETRYING":
                recs.append(R.chstatus_retrying(chl, est.qmgrs[peer], since=info["since"], at=t, seqbase=seqbase,
                                                xmitq=est.xmitq_for(qm, chl), xqmsgsa=self.held_on(qm, to=peer)))
            else:
                recs.append(R.chstatus_running(me, chl, typ, est.qmgrs[peer], R.ChannelTraffic(
                    start=info["start"], msgs=info["msgs"], nbytes=info["bytes"], last=info["last"], seqbase=seqbase,
                    xmitq=est.xmitq_for(qm, chl) if typ == "CLUSSDR" else "",
                    xqmsgsa=self.held_on(qm, to=peer) if typ == "CLUSSDR" else 0)))
        return R.Cmd("DISPLAY CHSTATUS(*) ALL", recs, empty_msg="AMQ8420")

    def zos_config_cmds(self, qm: str, t: datetime) -> list[R.Cmd]:
        """What a member's capture holds: DISPLAY QMGR (QSGNAME, IGQ), GROUP, CFSTRUCT and the rest as for
        runmqsc, SYSTEM.QSG.TRANSMIT.QUEUE among the local queues."""
        est = self.est
        group = est.qsg
        assert group is not None
        me = est.qmgrs[qm]
        cmds = self.config_cmds(qm, t)
        qlocal = next(c for c in cmds if c.text.startswith("DISPLAY QLOCAL"))
        qlocal.recs.append(RZ.shared_xmitq_rec(me, group.maxmsgl, min(est.qmgrs[m].created for m in group.members)))
        qlocal.recs.sort(key=lambda r: r.attrs[0][1])
        created = min(est.qmgrs[m].created for m in group.members) + timedelta(minutes=3)
        return [R.Cmd("DISPLAY QMGR ALL", [RZ.qmgr_rec(me, list(me.clusters), group.name, self.cfg.igq[qm])]),
                R.Cmd("DISPLAY GROUP"),
                R.Cmd("DISPLAY CFSTRUCT(*) ALL", RZ.cfstruct_recs(group.cflevel, created))] + cmds[1:]

    def zos_group(self) -> tuple[str, list[RZ.Member]]:
        group = self.est.qsg
        assert group is not None
        return group.name, [RZ.Member(m, n) for n, m in enumerate(group.members, 1)]

    def capture(self, qm: str, day: date, minute: int) -> None:
        t = at_min(day, minute)
        hhmmss = f"{minute // 60:02d}{minute % 60:02d}00"
        q = self.est.qmgrs[qm]
        if q.zos:  # CSQUTIL COMMAND output of a member of the queue-sharing group
            self.write(day, qm, f"config_{hhmmss}.txt",
                       RZ.render_csqutil(q, t, self.zos_config_cmds(qm, t), group=self.zos_group()))
            self.write(day, qm, f"chstatus_{hhmmss}.txt", RZ.render_csqutil(q, t, [self.chstatus_cmd(qm, t)]))
            return
        cmds = self.config_cmds(qm, t)
        if qm in self.rest:
            self.write(day, qm, f"config_{hhmmss}.json", R.render_rest(cmds))
        else:
            text = R.render_mqsc(q, cmds)
            for b in self.broken_plan:
                if b["kind"] == "unbalanced" and b["day"] == day and b["qmgr"] == qm and minute == BASE_CAPTURE_MIN:
                    text = self._unbalance(text, b)
            self.write(day, qm, f"config_{hhmmss}.mqsc", text)
        self.write(day, qm, f"chstatus_{hhmmss}.mqsc", R.render_mqsc(q, [self.chstatus_cmd(qm, t)]))

    def _unbalance(self, text: str, b: dict) -> str:
        y = self.est.qmgrs[b["record_of"]]
        good = f"CONNAME({y.conname})"
        pos = text.find(good)
        assert pos > 0 and text.count(good) == 1, (b, text.count(good))
        header = text.rfind("\nAMQ8441", 0, pos) + 1
        line = text.count("\n", 0, header) + 1
        self.broken.append({"kind": "unbalanced", "file": self._rel(b["day"], b["qmgr"],
                                                                     f"config_{BASE_CAPTURE_MIN // 60:02d}"
                                                                     f"{BASE_CAPTURE_MIN % 60:02d}00.mqsc"),
                            "line": line, "expected_reason": BROKEN_REASONS["unbalanced"],
                            "effect": f"the CLUSQMGR({y.name}) record is quarantined; the rest of the file is "
                                      f"accepted (a full repository's view: no effect on routing)"})
        return text[:pos] + good[:-1] + " " + text[pos + len(good):]

    def truncated_capture(self, b: dict) -> None:
        day, qm, minute = b["day"], b["qmgr"], b["minute"]
        t = at_min(day, minute)
        q = self.est.qmgrs[qm]
        if q.zos:
            full, conname, head, ext = RZ.render_csqutil(q, t, [self.chstatus_cmd(qm, t)]), "\nCONNAME(", \
                "\nCSQM201I", "txt"
        else:
            full, conname, head, ext = R.render_mqsc(q, [self.chstatus_cmd(qm, t)]), "\n   CONNAME(", "\nAMQ8417", \
                "mqsc"
        cut = full.rfind(conname)
        assert cut > 0
        text = full[:cut + len(conname) + 6]
        header = max(text.rfind(head), -1) + 1
        line = text.count("\n", 0, header) + 1
        name = f"chstatus_{minute // 60:02d}{minute % 60:02d}00.{ext}"
        self.write(day, qm, name, text)
        self.broken.append({"kind": "truncated", "file": self._rel(day, qm, name), "line": line,
                            "expected_reason": BROKEN_REASONS["truncated"],
                            "effect": "the capture job was killed mid-write: the complete records are accepted, "
                                      "the last one is quarantined (after the day's traffic)"})

    def failed_capture(self, b: dict) -> None:
        day, qm, minute = b["day"], b["qmgr"], b["minute"]
        q = self.est.qmgrs[qm]
        name = f"config_{minute // 60:02d}{minute % 60:02d}00.{'txt' if q.zos else 'mqsc'}"
        self.write(day, qm, name, f"ssh: connect to host {q.ip} port 22: No route to host\n"
                                  f"capture-mq.sh: runmqsc capture of {qm} failed (rc=255), output kept for the "
                                  f"record\n")
        self.broken.append({"kind": "not_mqsc", "file": self._rel(day, qm, name), "line": 0,
                            "expected_reason": BROKEN_REASONS["not_mqsc"],
                            "effect": "the whole file is in no known format: rejected as a file"})
