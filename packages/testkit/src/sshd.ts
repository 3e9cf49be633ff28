import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, pollUntil, Proc, tempDir } from './processes.js';

// A throwaway OpenSSH server on loopback: the local service behind `svc tcp` in the tests, and
// the far end of the `ssh -L` the benchmark compares TCP tunnels with.

const run = promisify(execFile);

export const SSHD = '/usr/sbin/sshd';
export const SSH = '/usr/bin/ssh';
export const SSH_KEYGEN = '/usr/bin/ssh-keygen';

/** Why OpenSSH cannot run here, or undefined when it can. */
export function sshMissing(): string | undefined {
  const missing = [SSHD, SSH, SSH_KEYGEN].filter((bin) => !existsSync(bin));
  return missing.length > 0 ? `${missing.join(', ')} missing (apt-get install -y openssh-server openssh-client)` : undefined;
}

export interface TestSshd {
  port: number;
  pid: number;
  /** `ssh` options that log in with the generated client key, without questions or host key checks. */
  clientOptions: string[];
  /** `user@127.0.0.1` for the user running the tests, whose key sshd accepts. */
  login: string;
  close(): Promise<void>;
}

/**
 * Starts `sshd -D` on a free loopback port with a generated host key and one authorized client
 * key, and resolves once it accepts connections. `maxSessions` lifts sshd's channel limit for
 * loads that open many forwards at once.
 */
export async function startSshd(options: { maxSessions?: number } = {}): Promise<TestSshd> {
  const dir = await tempDir('svc-sshd-');
  try {
    const hostKey = path.join(dir.dir, 'host_key');
    const clientKey = path.join(dir.dir, 'client_key');
    await run(SSH_KEYGEN, ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
    await run(SSH_KEYGEN, ['-q', '-t', 'ed25519', '-N', '', '-f', clientKey]);
    await writeFile(path.join(dir.dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`));
    // sshd's privilege separation directory; Debian creates it at boot, containers often lack it.
    if (process.getuid?.() === 0) await mkdir('/run/sshd', { recursive: true });
    const port = await freePort();
    const config = [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir.dir, 'sshd.pid')}`,
      'UsePAM no',
      'StrictModes no',
      'PermitRootLogin yes',
      'PasswordAuthentication no',
      'AllowTcpForwarding yes',
      ...(options.maxSessions === undefined ? [] : [`MaxSessions ${options.maxSessions}`]),
      `AuthorizedKeysFile ${path.join(dir.dir, 'authorized_keys')}`,
    ].join('\n');
    await writeFile(path.join(dir.dir, 'sshd_config'), `${config}\n`);
    const sshd = new Proc(
      spawn(SSHD, ['-D', '-e', '-f', path.join(dir.dir, 'sshd_config')], { stdio: ['ignore', 'pipe', 'pipe'] }),
      'sshd',
    );
    try {
      await pollUntil('sshd listening', async () => {
        if (sshd.child.exitCode !== null) throw new Error(`sshd exited ${sshd.child.exitCode}:\n${sshd.output}`);
        return accepts(port);
      });
    } catch (error) {
      await sshd.stop('SIGTERM', 5_000);
      throw error;
    }
    return {
      port,
      pid: sshd.pid,
      clientOptions: [
        '-i',
        clientKey,
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'BatchMode=yes',
        '-o',
        'LogLevel=ERROR',
      ],
      login: `${os.userInfo().username}@127.0.0.1`,
      close: async () => {
        await sshd.stop('SIGTERM', 5_000);
        await dir.remove();
      },
    };
  } catch (error) {
    await dir.remove();
    throw error;
  }
}

/** Whether something accepts a TCP connection on the loopback port (the connection is dropped at once). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
