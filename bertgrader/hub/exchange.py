"""A hand-in no other student can read or change: nbgrader's submit, with the permissions tightened.

nbgrader's own submit leaves a hand-in readable by everyone (files 0644) in a folder everyone may write (0777),
hidden only by its name's timestamp and random suffix. The exchange's inbound/ is the instructor's, mode 0733 with
the set-group-id bit, so what a student creates in it belongs to the instructor's group, as long as no mode is
copied onto it (shutil.copytree copies the source folder's mode, which clears that bit before nbgrader writes
timestamp.txt): this submit copies the files without their modes, then makes the hand-in readable by its author
and that group only (files 0640, folders 0750, the hand-in's own folder 0770 so the instructor can delete it, as
nbgrader intends). Students get it through their nbgrader_config.py (accounts.py).
"""
import os
import shutil
import stat
import tempfile

from nbgrader.exchange.default.submit import ExchangeSubmit


class PrivateSubmit(ExchangeSubmit):
    def do_copy(self, src, dest, log=None):
        if os.path.dirname(os.path.abspath(dest)) != os.path.abspath(self.inbound_path):
            return super().do_copy(src, dest, log)  # the student's own cache
        with tempfile.TemporaryDirectory() as staged:  # nbgrader's copy: its size limit, ignore and include rules
            staged = os.path.join(staged, "hand-in")
            super().do_copy(src, staged, log)
            for parent, _, files in os.walk(staged):  # then into inbound/, no mode copied
                here = os.path.join(dest, os.path.relpath(parent, staged))
                os.makedirs(here, exist_ok=True)
                for f in files:
                    shutil.copyfile(os.path.join(parent, f), os.path.join(here, f))

    def copy_files(self):
        super().copy_files()
        dest = os.path.join(self.inbound_path, self.assignment_filename)
        if not os.stat(self.inbound_path).st_mode & stat.S_ISGID:
            self.log.warning("%s does not pass its group on (no set-group-id bit): the instructor may not be able "
                             "to read this hand-in", self.inbound_path)
        self.set_perms(dest, fileperms=0o640, dirperms=0o750)
        os.chmod(dest, 0o770)
