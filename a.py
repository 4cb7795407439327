import subprocess, sys
subprocess.run(["ls"])
subprocess.run(["ls"], capture_output=True)
subprocess.call("ls", shell=True)
subprocess.check_output(["ls"])
subprocess.Popen(["ls"], stdout=subprocess.PIPE)
subprocess.Popen(["ls"])
os.system("ls")
class Redirect:
    def __enter__(self):
        self.old = sys.stdout
        sys.stdout = sys.stderr
    def __exit__(self, *a):
        sys.stdout = self.old
def f(name=input):
    pass
