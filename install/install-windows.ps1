#Requires -Version 5.1
#Requires -RunAsAdministrator
<#
.SYNOPSIS
  Installs spoolgate as a Windows service, starts it and checks it.

.DESCRIPTION
  Copies spoolgate.exe to "$env:ProgramFiles\spoolgate", writes a config to
  "$env:ProgramData\spoolgate\spoolgate.yaml" (kept if it exists), runs
  `spoolgate service install`, starts the service, and checks both
  `spoolgate service status` and `spoolgate status`.

  Before you run it:
  - A Windows service runs in session 0, which has no desktop: the browser
    must be headless there (web.headless: true, as written below).
  - Sign in to the chat site ONCE, interactively, as the account the service
    will run as, with the same config, so the service finds a logged-in
    profile:
        runas /user:HOST\ops "spoolgate.exe login examplechat --config C:\ProgramData\spoolgate\spoolgate.yaml"
    The profile lives in web.profiles (set below to a folder under
    ProgramData, so it does not depend on which account's AppData is used).
  - Run the service as that same account (-User, with its password): the
    default, LocalSystem, is not the account that signed in. That account
    needs the "Log on as a service" right (secpol.msc, Local Policies, User
    Rights Assignment); without it the start fails with error 1069.
  - API keys: set the variables named by apiKeyEnv as machine environment
    variables, e.g. [Environment]::SetEnvironmentVariable('EXAMPLE_API_KEY', 'sk-...', 'Machine')

.EXAMPLE
  .\install-windows.ps1 -Binary .\bin\spoolgate.exe -User "$env:COMPUTERNAME\ops"
#>
param(
    # The spoolgate.exe to install (make build with GOOS=windows).
    [Parameter(Mandatory = $true)] [string] $Binary,
    # The account that runs the service and owns the browser profile
    # (DOMAIN\name or .\name). Empty: LocalSystem (no web lane login).
    [string] $User = "",
    [string] $Name = "spoolgate",
    [string] $InstallDir = (Join-Path $env:ProgramFiles "spoolgate"),
    [string] $DataDir = (Join-Path $env:ProgramData "spoolgate")
)

$ErrorActionPreference = "Stop"
Set-StrictMode -Version Latest

function Invoke-Spoolgate {
    param([string[]] $Arguments)
    # Windows PowerShell turns a native command's stderr into errors, which
    # "Stop" would throw on; the exit status decides instead.
    $ErrorActionPreference = "Continue"
    $out = & $script:Exe @Arguments 2>&1 | ForEach-Object { "$_" }
    $code = $LASTEXITCODE
    $out | ForEach-Object { Write-Host "  $_" }
    if ($code -ne 0) { throw "spoolgate $($Arguments -join ' ') failed with exit status $code" }
    return ($out | Out-String).Trim()
}

# 1. The binary.
New-Item -ItemType Directory -Force -Path $InstallDir | Out-Null
$script:Exe = Join-Path $InstallDir "spoolgate.exe"
Copy-Item -Force -Path $Binary -Destination $script:Exe
Write-Host "installed $script:Exe"
Invoke-Spoolgate @("version") | Out-Null

# 2. The config, in ProgramData (not the service's working directory,
#    which would be System32). Kept if it exists: it is the operator's.
New-Item -ItemType Directory -Force -Path $DataDir | Out-Null
$Config = Join-Path $DataDir "spoolgate.yaml"
if (Test-Path $Config) {
    Write-Host "keeping the existing $Config"
} else {
    # install_test.go parses this text (between the @' '@ lines) with spool.ParseConfig.
    $yaml = @'
# spoolgate.yaml for a Windows service; see install/spoolgate.yaml for every key.
spool: spool                    # relative to this file: C:\ProgramData\spoolgate\spool
host: ""                        # default: the computer name
poll: false                     # true if the spool is on a network share
shutdownGrace: 30s
http: 127.0.0.1:7311
api:
  concurrency: 3
web:
  headless: true                # a service runs in session 0: no visible browser
  profiles: C:\ProgramData\spoolgate\profiles
  instance: default
  taskTimeout: 15m
models:
  - name: writer
    kind: api
    baseURL: https://api.example.com/v1
    model: vendor-model-name
    apiKeyEnv: EXAMPLE_API_KEY
  - name: thinker-web
    kind: web
    site: examplechat
    account: ops1
    needEmptyPrompt: true
sites:
  examplechat:
    url: https://chat.example.com/
    input: "textarea"
    send: "button[type=submit]"
    answer: ".message.assistant"
    busy: "button.stop"
    loggedOut: "a.login"
accounts:
  ops1: {disabled: false}
'@
    # Without a byte-order mark: YAML readers choke on one.
    [System.IO.File]::WriteAllText($Config, $yaml, (New-Object System.Text.UTF8Encoding $false))
    Write-Host "wrote ${Config}: edit models and sites, then run this script again"
}

# The service account must be able to write the spool and its profile.
if ($User -ne "") {
    & icacls $DataDir /grant "${User}:(OI)(CI)M" /T | Out-Null
    if ($LASTEXITCODE -ne 0) { throw "icacls: cannot grant $User access to $DataDir" }
}

# 3. The service. The password reaches spoolgate through the environment,
#    never on a command line.
$installArgs = @("service", "install", "--name", $Name, "--config", $Config)
if ($User -ne "") {
    $cred = Get-Credential -UserName $User -Message "Password of $User, the account the spoolgate service runs as"
    $env:SPOOLGATE_SERVICE_PASSWORD = $cred.GetNetworkCredential().Password
    $installArgs += @("--user", $User)
}
try {
    $status = Invoke-Spoolgate @("service", "status", "--name", $Name)
    if ($status -ne "not installed") {
        Write-Host "replacing the installed service ($status)"
        if ($status -eq "running") { Invoke-Spoolgate @("service", "stop", "--name", $Name) | Out-Null }
        Invoke-Spoolgate @("service", "uninstall", "--name", $Name) | Out-Null
    }
    Invoke-Spoolgate $installArgs | Out-Null
} finally {
    Remove-Item Env:\SPOOLGATE_SERVICE_PASSWORD -ErrorAction SilentlyContinue
}

# 4. Start it and check it.
Invoke-Spoolgate @("service", "start", "--name", $Name) | Out-Null
$deadline = (Get-Date).AddSeconds(30)
do {
    Start-Sleep -Seconds 1
    $status = Invoke-Spoolgate @("service", "status", "--name", $Name)
} while ($status -ne "running" -and (Get-Date) -lt $deadline)
if ($status -ne "running") {
    Write-Host "the service is $status (error 1069 on start: grant $User 'Log on as a service');"
    Write-Host "its messages are in the Application event log:"
    Get-WinEvent -FilterHashtable @{ LogName = "Application"; ProviderName = $Name } -MaxEvents 10 -ErrorAction SilentlyContinue |
        ForEach-Object { Write-Host "  $($_.TimeCreated) $($_.LevelDisplayName): $($_.Message)" }
    throw "spoolgate service did not reach running"
}

# The spool as the daemon sees it: lanes, held reasons (a web lane not
# logged in shows up here), counts.
Invoke-Spoolgate @("status", "--config", $Config) | Out-Null
Write-Host ""
Write-Host "spoolgate runs as service '$Name'. Drop tasks into $(Join-Path $DataDir 'spool\incoming'),"
Write-Host "watch http://127.0.0.1:7311/ and the Application event log (source '$Name')."
